package dev.libreset.sample;

import dev.libreset.ChatMessage;
import dev.libreset.ChatOptions;
import dev.libreset.EndReason;
import dev.libreset.Model;
import dev.libreset.ModelOptions;
import dev.libreset.PolicyParams;
import dev.libreset.ResetException;
import dev.libreset.Session;
import dev.libreset.Step;
import dev.libreset.StopOptions;
import dev.libreset.Tokenizer;
import dev.libreset.UncheckedResetException;
import java.util.ArrayList;
import java.util.List;

/**
 * Generates text from a model directory with ReSET sampling:
 *
 * <pre>
 * java -cp libreset.jar:classes -Dreset.library=build/libreset.so -Djava.library.path=DIR_OF_libreset_jni.so \
 *     dev.libreset.sample.Generate [-max-tokens N] [-stop TEXT]... [-stop-id ID]... \
 *     tests/fixtures/chat-model "What is 2+2?"
 * </pre>
 *
 * A model with a tokenizer gets the prompt chat-formatted and its answer streamed as text; one
 * without (the golden fixtures) is prefilled with ids 1 2 3 and its ids and entropies printed.
 *
 * <p>The options, before the model directory, are the library's stop conditions ({@link
 * Session#setStop}), none by default: {@code -max-tokens N} ends the sequence after N generated tokens
 * (0: no limit), {@code -stop TEXT} once its text contains TEXT (repeatable; the model needs a
 * tokenizer), {@code -stop-id ID} when it draws token ID (repeatable); {@code --} ends the options.
 * The sample stops by itself after 32 steps (64 with a tokenizer), or after -max-tokens steps when
 * that is more.  A last line says how the sequence ended: {@code end: length}, {@code end: stop
 * (string I)} (I: the index of the -stop that matched), {@code end: stop (id ID)}, {@code end: end of
 * generation}, or {@code end: limit} when the sample's own step cap came first.
 */
public final class Generate {
    private static final String USAGE =
            "usage: Generate [-max-tokens N] [-stop TEXT]... [-stop-id ID]... MODEL_DIR [PROMPT]";

    private Generate() {}

    /** A mistake in the command line: its message is printed with the usage. */
    private static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** The parsed command line. */
    private static final class Options {
        int maxTokens;
        final List<String> stops = new ArrayList<>();
        final List<Integer> stopIds = new ArrayList<>();
        final List<String> positionals = new ArrayList<>();

        boolean anyStop() {
            return maxTokens > 0 || !stops.isEmpty() || !stopIds.isEmpty();
        }

        StopOptions stopOptions() {
            int[] ids = new int[stopIds.size()];
            for (int i = 0; i < ids.length; i++) ids[i] = stopIds.get(i);
            return new StopOptions().maxTokens(maxTokens).strings(stops.toArray(new String[0])).ids(ids);
        }
    }

    private static int nonNegative(String option, String value) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new UsageException(option + " wants a whole number, not \"" + value + "\"");
        }
        if (n < 0) throw new UsageException(option + " must be 0 or more, not " + n);
        return n;
    }

    /** Options first (as -name VALUE or -name=VALUE), then MODEL_DIR and an optional PROMPT. */
    static Options parse(String[] args) throws UsageException {
        Options o = new Options();
        int i = 0;
        for (; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) {
                i++;
                break;
            }
            if (!arg.startsWith("-") || arg.equals("-")) break;
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (name.startsWith("--")) name = name.substring(1);
            if (!name.equals("-max-tokens") && !name.equals("-stop") && !name.equals("-stop-id")) {
                throw new UsageException("unknown option " + arg);
            }
            if (value == null) {
                if (i + 1 >= args.length) throw new UsageException(name + " wants a value");
                value = args[++i];
            }
            switch (name) {
                case "-max-tokens" -> o.maxTokens = nonNegative(name, value);
                case "-stop" -> {
                    if (value.isEmpty()) throw new UsageException("-stop wants a non-empty string");
                    o.stops.add(value);
                }
                default -> o.stopIds.add(nonNegative(name, value));
            }
        }
        for (; i < args.length; i++) o.positionals.add(args[i]);
        if (o.positionals.isEmpty()) throw new UsageException("no MODEL_DIR");
        if (o.positionals.size() > 2) throw new UsageException("more than MODEL_DIR and PROMPT");
        return o;
    }

    /** How the last step ended its sequence, or the sample's cap when it did not. */
    static String endLine(Step last) {
        if (last == null || !last.end()) return "end: limit";
        EndReason reason = last.endReason();
        return switch (reason) {
            case LENGTH -> "end: length";
            case STOP -> last.stopIndex() >= 0
                    ? "end: stop (string " + last.stopIndex() + ")"
                    : "end: stop (id " + last.token() + ")";
            case EOS -> "end: end of generation";
            default -> "end: " + reason.name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = parse(args);
        } catch (UsageException e) {
            System.err.println("Generate: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        try {
            run(options);
        } catch (ResetException e) {
            System.err.println("Generate: " + e.getMessage());
            System.exit(1);
        } catch (UncheckedResetException e) {
            System.err.println("Generate: " + e.getCause().getMessage());
            System.exit(1);
        } catch (IllegalArgumentException e) {
            // setStop refuses a stop string holding U+0000 this way.
            System.err.println("Generate: " + e.getMessage());
            System.exit(2);
        }
    }

    private static void run(Options options) throws ResetException {
        String prompt = options.positionals.size() > 1 ? options.positionals.get(1) : "What is 2+2?";
        try (Model model = Model.load(options.positionals.get(0), new ModelOptions())) {
            Tokenizer tokenizer = model.tokenizer();
            int[] ids = tokenizer == null
                    ? new int[] {1, 2, 3}
                    : tokenizer.encode(tokenizer.chatFormat(List.of(ChatMessage.user(prompt)), new ChatOptions()));
            int steps = Math.max(tokenizer == null ? 32 : 64, options.maxTokens);
            try (Session session = model.newSession(Math.max(512, ids.length + steps), 1)) {
                // ReSET with explicit T_high, T_low, tau0: the fixtures are not in the paper's table.
                session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32).seed(7));
                if (options.anyStop()) session.setStop(options.stopOptions());
                session.prefill(ids);
                Step last = null;
                for (Step step : session.generate(steps)) {
                    last = step;
                    if (tokenizer == null) {
                        System.out.printf("%6d %8.4f T=%.2f%n", step.token(), step.entropy(), step.temperature());
                    } else {
                        System.out.print(step.text());
                        System.out.flush();
                    }
                }
                if (tokenizer != null) {
                    // Stopped by the cap: text held back as the possible start of a stop string is shown now.
                    if (last != null && !last.end()) System.out.print(session.heldText(0));
                    System.out.println();
                }
                System.out.println(endLine(last));
            }
        }
    }
}
