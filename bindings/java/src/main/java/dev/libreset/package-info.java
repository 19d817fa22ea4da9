/**
 * The Java binding of libreset (include/reset.h is the manual): load a model, open sessions,
 * choose a sampling policy (greedy, fixed, ReSET), tokenize and chat-format, prefill, and stream
 * decode steps with their per-token signals.
 *
 * <pre>{@code
 * try (Model model = Model.load("tests/fixtures/chat-model");
 *      Session session = model.newSession(256, 1)) {
 *     Tokenizer tokenizer = model.tokenizer();
 *     String prompt = tokenizer.chatFormat(List.of(ChatMessage.user("2+2?")), new ChatOptions());
 *     session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32));
 *     session.prefill(tokenizer.encode(prompt));
 *     for (String text : session.stream(64)) System.out.print(text);
 * }
 * }</pre>
 *
 * <h2>Memory ownership</h2>
 * <ul>
 *   <li>{@link dev.libreset.Model}, {@link dev.libreset.Session}, {@link dev.libreset.Policy} and
 *       a loaded {@link dev.libreset.Tokenizer} each own one C handle; {@code close()} frees it
 *       (idempotent; use try-with-resources).  A forgotten one is freed by a
 *       {@link java.lang.ref.Cleaner} once unreachable, but close() is the contract.  A closed
 *       object throws IllegalStateException.</li>
 *   <li>A session keeps its model reachable; libreset keeps a model alive until its last session
 *       is freed, so the order of close() calls does not matter.  A model's own tokenizer
 *       ({@link dev.libreset.Model#tokenizer()}) belongs to the model and stops working when the
 *       model is closed.</li>
 *   <li>Nothing returned points into libreset: ids, logits, texts and infos are copied into Java
 *       objects before the call returns.  Option and parameter structs are C memory the binding
 *       allocates and frees within each call.</li>
 *   <li>Text crosses as UTF-8 bytes ({@code byte[]}), encoded and decoded with
 *       {@link java.nio.charset.StandardCharsets#UTF_8}, never as JNI's modified UTF-8.  A String
 *       holding an unpaired surrogate is refused with {@link dev.libreset.Status#BAD_UTF8}.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * Every failing libreset call throws the checked {@link dev.libreset.ResetException}, holding
 * the status, its C name and the library's message; the iterators of a session wrap it in
 * {@link dev.libreset.UncheckedResetException}.  Before its first call the binding refuses a
 * libreset of another ABI major, or of an older minor than it was written for
 * ({@link dev.libreset.Reset#checkAbi}).
 *
 * <h2>Threads</h2>
 * A model and a tokenizer may be shared by threads.  A session and a policy are used by one
 * thread at a time; {@link dev.libreset.Session#cancel()} may be called from any thread.
 *
 * <h2>Loading</h2>
 * {@link dev.libreset.Loader} finds libreset ({@code -Dreset.library=/path/libreset.so},
 * {@code $RESET_LIBRARY}, or {@code java.library.path}) and the JNI glue {@code libreset_jni.so}.
 */
package dev.libreset;
