package dev.libreset.sample;

import dev.libreset.ChatMessage;
import dev.libreset.ChatOptions;
import dev.libreset.Model;
import dev.libreset.ModelOptions;
import dev.libreset.PolicyParams;
import dev.libreset.ResetException;
import dev.libreset.Session;
import dev.libreset.Step;
import dev.libreset.Tokenizer;
import java.util.List;

/**
 * Generates text from a model directory with ReSET sampling:
 *
 * <pre>
 * java -cp libreset.jar:classes -Dreset.library=build/libreset.so -Djava.library.path=DIR_OF_libreset_jni.so \
 *     dev.libreset.sample.Generate tests/fixtures/chat-model "What is 2+2?"
 * </pre>
 *
 * A model with a tokenizer gets the prompt chat-formatted and its answer streamed as text; one
 * without (the golden fixtures) is prefilled with ids 1 2 3 and its ids and entropies printed.
 */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws ResetException {
        if (args.length < 1) {
            System.err.println("usage: Generate MODEL_DIR [PROMPT]");
            System.exit(2);
        }
        String prompt = args.length > 1 ? args[1] : "What is 2+2?";
        try (Model model = Model.load(args[0], new ModelOptions());
             Session session = model.newSession(512, 1)) {
            // ReSET with explicit T_high, T_low, tau0: the fixtures are not in the paper's table.
            session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32).seed(7));
            Tokenizer tokenizer = model.tokenizer();
            if (tokenizer == null) {
                session.prefill(new int[] {1, 2, 3});
                for (Step step : session.generate(32)) {
                    System.out.printf("%6d %8.4f T=%.2f%n", step.token(), step.entropy(), step.temperature());
                }
                return;
            }
            String chat = tokenizer.chatFormat(List.of(ChatMessage.user(prompt)), new ChatOptions());
            session.prefill(tokenizer.encode(chat));
            for (String text : session.stream(64)) {
                System.out.print(text);
                System.out.flush();
            }
            System.out.println();
        }
    }
}
