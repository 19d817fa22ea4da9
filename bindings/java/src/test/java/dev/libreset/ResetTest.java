package dev.libreset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java binding against the C program (tests/bindings/java.sh runs it through ctest):
 * RESET_SOURCE_DIR is the source tree, RESET_BINDING_IDS where the C test wrote prompt.txt and
 * expected.txt.
 */
class ResetTest {
    private static final Path SOURCE = Paths.get(System.getenv().getOrDefault("RESET_SOURCE_DIR", "."));
    private static final String GOLDEN = SOURCE.resolve("tests/fixtures/models/qwen3-tied").toString();
    private static final String CHAT = SOURCE.resolve("tests/fixtures/chat-model").toString();

    private static Model golden() throws ResetException {
        return Model.load(GOLDEN, new ModelOptions().weights(Weights.BF16).backend(Backend.CPU));
    }

    /** The same on one thread: several times faster for these tiny shapes on a shared CI machine. */
    private static Model goldenOneThread() throws ResetException {
        return Model.load(GOLDEN, new ModelOptions().weights(Weights.BF16).backend(Backend.CPU).threads(1));
    }

    private static int[] ids(String name) throws IOException {
        String dir = System.getenv("RESET_BINDING_IDS");
        assertNotNull(dir, "RESET_BINDING_IDS is unset (run through ctest)");
        String text = Files.readString(Paths.get(dir, name)).trim();
        return Arrays.stream(text.split("\\s+")).mapToInt(Integer::parseInt).toArray();
    }

    @Test
    void greedyContinuationIsTheOneCDecodes() throws Exception {
        int[] prompt = ids("prompt.txt");
        int[] expected = ids("expected.txt");
        try (Model model = golden(); Session session = model.newSession(128, 1)) {
            session.setPolicy(PolicyParams.greedy()); // generation_config.json asks for sampling
            session.prefill(prompt);
            List<Integer> got = new ArrayList<>();
            for (Step step : session.generate(expected.length)) got.add(step.token());
            assertArrayEquals(expected, got.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    /** The logits after the prompt, then 8 greedy tokens, of the golden model loaded with fileAccess. */
    private static Object[] decodeLoadedWith(FileAccess fileAccess) throws Exception {
        ModelOptions options = new ModelOptions().weights(Weights.BF16).backend(Backend.CPU).fileAccess(fileAccess);
        try (Model model = Model.load(GOLDEN, options); Session session = model.newSession(64, 1)) {
            session.setPolicy(PolicyParams.greedy());
            session.prefill(ids("prompt.txt"));
            float[] logits = session.logits(0);
            List<Integer> tokens = new ArrayList<>();
            for (Step step : session.generate(8)) tokens.add(step.token());
            assertEquals(8, tokens.size(), fileAccess.toString());
            return new Object[] {logits, tokens};
        }
    }

    @Test
    void aModelReadIntoMemoryDecodesAsTheMappedOne() throws Exception {
        // 0.12: READ copies the bytes MAP reads in place, so the logits are equal bit for bit and greedy
        // decoding draws the same tokens.  (An out-of-range value cannot be built from the enum.)
        Object[] mapped = decodeLoadedWith(FileAccess.MAP);
        Object[] read = decodeLoadedWith(FileAccess.READ);
        assertArrayEquals((float[]) mapped[0], (float[]) read[0]);
        assertEquals(mapped[1], read[1]);
    }

    @Test
    void resetSignalsReachEachStep() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(0, 1)) {
            session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 8).seed(3));
            session.prefill(ids("prompt.txt"));
            int n = 0;
            for (Step step : session.generate(8)) {
                assertTrue(step.entropy() > 0 && step.threshold() > 0, step.toString());
                assertTrue(step.temperature() == 1.0f || step.temperature() == 0.3f, step.toString());
                assertEquals(0, step.sequence());
                n++;
            }
            assertEquals(8, n);
            assertEquals(model.info().vocabSize(), session.logits(0).length);
        }
    }

    @Test
    void aPolicyFedTheSessionsLogitsMakesItsDecisions() throws Exception {
        try (Model model = Model.load(CHAT); Session session = model.newSession(256, 1)) {
            PolicyParams params = PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).seed(11);
            session.setPolicy(params);
            Tokenizer tokenizer = model.tokenizer();
            session.prefill(tokenizer.encode("1 + 1 = 2\n\nThen 2 + 2 = 4.\n"));
            try (Policy policy = Policy.forModel(model, params)) {
                for (int i = 0; i < 12; i++) {
                    Decision decision = policy.decide(session.logits(0));
                    Step step = session.step().get(0);
                    assertEquals(step.entropy(), decision.entropy(), 1e-5f, "token " + i);
                    assertEquals(step.temperature(), decision.temperature(), "token " + i);
                    assertEquals(step.threshold(), decision.threshold(), 1e-5f, "token " + i);
                    assertEquals(step.boundary(), decision.boundary(), "token " + i);
                    policy.accept(step.token());
                }
            }
        }
    }

    @Test
    void enumValuesOfANewerLibraryReadAsUnknownAndAreRefused() throws Exception {
        // A newer libreset of the same ABI major may report a value this binding does not know:
        // reading it must not throw (it did before session 27), and passing UNKNOWN back is refused.
        assertEquals(Weights.UNKNOWN, Weights.of(99));
        assertEquals(Backend.UNKNOWN, Backend.of(99));
        assertEquals(PolicyKind.UNKNOWN, PolicyKind.of(99));
        assertEquals(ChatTemplate.UNKNOWN, ChatTemplate.of(99));
        assertEquals(EndReason.UNKNOWN, EndReason.of(99));
        assertEquals(KvCache.UNKNOWN, KvCache.of(99));
        assertEquals(CheckpointFormat.UNKNOWN, CheckpointFormat.of(99));
        assertEquals(CheckpointFormat.MODELOPT, CheckpointFormat.of(CheckpointFormat.MODELOPT.code()));
        assertEquals(KvCache.FP8, KvCache.of(KvCache.FP8.code()));
        assertEquals(EndReason.LENGTH, EndReason.of(EndReason.LENGTH.code()));
        assertEquals(Weights.BF16, Weights.of(Weights.BF16.code()));
        ResetException weights = assertThrows(ResetException.class,
                () -> Model.load(GOLDEN, new ModelOptions().weights(Weights.UNKNOWN)));
        assertEquals(Status.INVALID_ARGUMENT, weights.getStatus());
        ResetException backend = assertThrows(ResetException.class,
                () -> Model.load(GOLDEN, new ModelOptions().backend(Backend.UNKNOWN)));
        assertEquals(Status.INVALID_ARGUMENT, backend.getStatus());
        try (Model model = goldenOneThread(); Session session = model.newSession(16, 1);
             Tokenizer tokenizer = Tokenizer.load(CHAT)) {
            ResetException kind = assertThrows(ResetException.class,
                    () -> session.setPolicy(PolicyParams.greedy().kind(PolicyKind.UNKNOWN)));
            assertEquals(Status.INVALID_ARGUMENT, kind.getStatus());
            ResetException kvCache = assertThrows(ResetException.class,
                    () -> model.newSession(new SessionOptions().kvCache(KvCache.UNKNOWN)));
            assertEquals(Status.INVALID_ARGUMENT, kvCache.getStatus());
            ResetException template = assertThrows(ResetException.class, () -> tokenizer.chatFormat(
                    List.of(ChatMessage.user("hi")), new ChatOptions().template(ChatTemplate.UNKNOWN)));
            assertEquals(Status.INVALID_ARGUMENT, template.getStatus());
        }
    }

    private static final Path SHARED_TOKENIZERS = SOURCE.resolve("../shared/data/tokenizers");

    /**
     * The tool-calling cases of tests/text/chat_reference.json (transformers' rendering), as
     * tests/bindings/tool_cases.py writes them for a test without a JSON reader: NUL-separated fields.
     */
    private static List<String[]> toolCases() throws IOException {
        String dir = System.getenv("RESET_TOOL_CASES");
        assertNotNull(dir, "RESET_TOOL_CASES is unset (run through ctest)");
        List<String[]> cases = new ArrayList<>();
        try (var files = Files.list(Paths.get(dir))) {
            for (Path file : files.sorted().toList()) {
                cases.add(new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\0", -1));
            }
        }
        return cases;
    }

    @Test
    void chatFormatRendersToolsAsTransformersDoes() throws Exception {
        Path qwen3 = SHARED_TOKENIZERS.resolve("qwen3");
        assumeTrue(Files.exists(qwen3.resolve("tokenizer.json")), "SKIPPED: no qwen3 tokenizer at " + qwen3);
        List<String[]> cases = toolCases();
        assertEquals(16, cases.size(), "4 tool conversations x generation prompt x thinking");
        try (Tokenizer tokenizer = Tokenizer.load(qwen3.toString())) {
            for (String[] c : cases) {
                int n = Integer.parseInt(c[3]);
                assertEquals(4 + 3 * n + 1, c.length);
                List<ChatMessage> messages = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    String calls = c[6 + 3 * i];
                    messages.add(new ChatMessage(c[4 + 3 * i], c[5 + 3 * i], calls.isEmpty() ? null : calls));
                }
                ChatOptions options = new ChatOptions().addGenerationPrompt(c[0].equals("1"))
                        .enableThinking(c[1].equals("1")).tools(c[2].isEmpty() ? null : c[2]);
                assertEquals(c[4 + 3 * n], tokenizer.chatFormat(messages, options),
                        String.join(" ", Arrays.copyOf(c, 4)));
            }
        }
    }

    @Test
    void chatFormatRefusesBadToolsClearly() throws Exception {
        Path qwen3Dir = SHARED_TOKENIZERS.resolve("qwen3");
        Path llama3Dir = SHARED_TOKENIZERS.resolve("llama3");
        assumeTrue(Files.exists(qwen3Dir.resolve("tokenizer.json")) && Files.exists(llama3Dir.resolve("tokenizer.json")),
                "SKIPPED: the qwen3 and llama3 tokenizers are missing under " + SHARED_TOKENIZERS);
        String tools = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}]";
        String call = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
                + "\"arguments\": {\"city\": \"Paris\"}}}]";
        ChatMessage user = ChatMessage.user("Weather in Paris?");
        try (Tokenizer qwen3 = Tokenizer.load(qwen3Dir.toString()); Tokenizer llama3 = Tokenizer.load(llama3Dir.toString())) {
            Object[][] cases = {
                {"tools where the template has none", llama3, List.of(user), tools, Status.UNSUPPORTED, "tools"},
                {"a call where the template has none", llama3, List.of(user, ChatMessage.assistant("", call)), null,
                 Status.UNSUPPORTED, "tool"},
                {"tools that are not JSON", qwen3, List.of(user), "[{\"type\": \"function\",", Status.INVALID_ARGUMENT,
                 "tools_json"},
                {"a call without arguments", qwen3,
                 List.of(user, ChatMessage.assistant("", "[{\"function\": {\"name\": \"f\"}}]")), null,
                 Status.INVALID_ARGUMENT, "tool_calls_json[1][0] has no \"arguments\""},
                {"a call on a user message", qwen3, List.of(new ChatMessage("user", "hi", call)), null,
                 Status.INVALID_ARGUMENT, "tool_calls_json[0]"},
            };
            for (Object[] c : cases) {
                @SuppressWarnings("unchecked")
                List<ChatMessage> messages = (List<ChatMessage>) c[2];
                ResetException e = assertThrows(ResetException.class, () -> ((Tokenizer) c[1]).chatFormat(
                        messages, new ChatOptions().tools((String) c[3])), (String) c[0]);
                assertEquals(c[4], e.getStatus(), c[0] + ": " + e.getMessage());
                assertTrue(e.getReason().contains((String) c[5]), c[0] + ": " + e.getMessage());
            }
            // A NUL would end the JSON early in C: refused, naming the argument.
            IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                    () -> qwen3.chatFormat(List.of(user), new ChatOptions().tools("[]\0")));
            assertTrue(nul.getMessage().startsWith("tools_json holds a NUL"), nul.getMessage());
            nul = assertThrows(IllegalArgumentException.class,
                    () -> qwen3.chatFormat(List.of(user, ChatMessage.assistant("", "[]\0")), new ChatOptions()));
            assertTrue(nul.getMessage().startsWith("tool_calls_json holds a NUL"), nul.getMessage());
            // "null" and "[]" are none.
            String want = qwen3.chatFormat(List.of(user, ChatMessage.assistant("ok")), new ChatOptions());
            for (String none : new String[] {"null", "[]"}) {
                assertEquals(want, qwen3.chatFormat(List.of(user, ChatMessage.assistant("ok", none)),
                        new ChatOptions().tools(none)), none);
            }
        }
    }

    @Test
    void prefillSequenceContinuesOneSequenceOnly() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(64, 2)) {
            assertEquals(Status.STATE,
                    assertThrows(ResetException.class, () -> session.prefillSequence(1, new int[] {7})).getStatus());
            session.prefill(new int[] {3, 4, 5});
            float[] before = session.logits(0);
            session.prefillSequence(1, new int[] {7, 8});
            assertEquals(3, session.length(0));
            assertEquals(5, session.length(1));
            assertArrayEquals(before, session.logits(0));
            assertFalse(java.util.Arrays.equals(before, session.logits(1)));
            assertEquals(Status.OUT_OF_RANGE,
                    assertThrows(ResetException.class, () -> session.prefillSequence(2, new int[] {7})).getStatus());
        }
    }

    @Test
    void maxContextIsWhatTheSessionHolds() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(16, 1)) {
            assertEquals(16, session.maxContext());
        }
        // 0 resolves to min(model maximum, 4096): qwen3-tied's max_position_embeddings is 512.
        try (Model model = goldenOneThread(); Session session = model.newSession(0, 1)) {
            assertEquals(512, session.maxContext());
        }
    }

    @Test
    void policyReadsBackWhatIsInForce() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(16, 1)) {
            // The fixture's generation_config.json: do_sample, temperature 0.6, top_k 20, top_p 0.95.
            PolicyParams initial = session.policy();
            assertEquals(PolicyKind.FIXED, initial.kind());
            assertEquals(0.6f, initial.temperature());
            assertEquals(20, initial.topK());
            assertEquals(0.95f, initial.topP());
            assertNull(initial.preset());
            assertFalse(initial.resetState());

            session.setPolicy(session.policy().topP(0.5f));
            PolicyParams changed = session.policy();
            assertEquals(PolicyKind.FIXED, changed.kind());
            assertEquals(0.5f, changed.topP());
            assertEquals(initial.temperature(), changed.temperature());
            assertEquals(initial.topK(), changed.topK());
            assertEquals(initial.minP(), changed.minP());
            assertEquals(initial.seed(), changed.seed());
            assertEquals(initial.window(), changed.window());

            // Below 0, tLow and tau0 take the preset's row; they must come back resolved.
            session.setPolicy(PolicyParams.reset(1.0f, -1, -1, 32).preset("Qwen3-8B"));
            PolicyParams preset = session.policy();
            assertEquals(PolicyKind.RESET, preset.kind());
            assertEquals(1.0f, preset.tHigh());
            assertEquals(0.1f, preset.tLow());
            assertEquals(0.5505f, preset.tau0());
            assertEquals(32, preset.window());
            assertNull(preset.preset());
        }
    }

    @Test
    void standalonePolicy() throws Exception {
        try (Policy policy = Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4), new int[] {5}, new int[] {6}, 0)) {
            Policy.Sample sample = policy.sample(new float[] {0, 1, 2, 0.5f, 0, -1, 0});
            assertTrue(sample.token() >= 0 && sample.token() <= 6, sample.toString());
            assertTrue(sample.decision().entropy() > 0);
            policy.accept(sample.token());
            ResetException bad = assertThrows(ResetException.class,
                    () -> policy.setParams(PolicyParams.fixed(-1)));
            assertEquals(Status.INVALID_ARGUMENT, bad.getStatus());
            assertTrue(bad.getReason().contains("temperature"), bad.getMessage());
            // A failing call changes nothing: the policy still decides.
            assertTrue(policy.decide(new float[] {1, 2, 3}).entropy() > 0);
            ResetException nan = assertThrows(ResetException.class, () -> policy.decide(new float[] {Float.NaN}));
            assertEquals(Status.INVALID_ARGUMENT, nan.getStatus());
        }
        ResetException noPreset = assertThrows(ResetException.class,
                () -> Policy.create(PolicyParams.reset(1.0f, -1, -1, 32), null, null, 0));
        assertEquals(Status.UNSUPPORTED, noPreset.getStatus());
        try (Policy preset = Policy.create(PolicyParams.reset(1.0f, -1, -1, 32).preset("Qwen3-8B"), null, null, 0)) {
            assertEquals(1.0f, preset.decide(new float[] {0, 0, 0, 0}).temperature());
        }
    }

    @Test
    void missingModelIsStatusIO() {
        ResetException e = assertThrows(ResetException.class, () -> Model.load("/nonexistent/model"));
        assertEquals(3, e.getStatusCode());
        assertEquals(Status.IO, e.getStatus());
        assertEquals("RESET_ERR_IO", e.getStatusName());
        assertFalse(e.getReason().isEmpty());
        assertTrue(e.getMessage().startsWith("RESET_ERR_IO: "), e.getMessage());
    }

    @Test
    void sessionErrorsCarryTheirStatus() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(16, 1)) {
            assertEquals(Status.STATE, assertThrows(ResetException.class, session::step).getStatus());
            int vocab = model.info().vocabSize();
            assertEquals(Status.OUT_OF_RANGE,
                    assertThrows(ResetException.class, () -> session.prefill(new int[] {vocab})).getStatus());
            assertEquals(Status.CONTEXT_OVERFLOW,
                    assertThrows(ResetException.class, () -> session.prefill(new int[17])).getStatus());
            assertEquals(Status.INVALID_ARGUMENT,
                    assertThrows(ResetException.class, () -> model.newSession(16, 9)).getStatus());
        }
    }

    @Test
    void anotherAbiMajorIsRefusedClearly() throws Exception {
        Reset.checkAbi(Reset.abiMajor() * 10000L + Reset.abiMinor() * 100L + 99);
        Reset.checkAbi(Reset.version());
        ResetException e = assertThrows(ResetException.class, () -> Reset.checkAbi(70102));
        assertEquals(Status.UNSUPPORTED, e.getStatus());
        assertTrue(e.getMessage().contains("libreset 7.1.2 has ABI major 7, but these bindings need 0"), e.getMessage());
        assertTrue(Reset.versionString().startsWith(Reset.version() / 10000 + "."), Reset.versionString());
    }

    /**
     * 0.10: info() names where a model's NVFP4 weights come from, one fixture of each reset_checkpoint_format, loaded
     * as it loads by default.  The format is the checkpoint's, not the weights': qwen3-tied loaded as NVFP4 is still
     * unquantized.  kvCacheScales: only ct-nvfp4a16-head-qwen3 carries calibrated FP8 K/V scales.
     */
    @Test
    void infoNamesTheCheckpointFormat() throws Exception {
        Map<String, CheckpointFormat> expected = Map.of(
                "qwen3-tied", CheckpointFormat.UNQUANTIZED,
                "modelopt-qwen3", CheckpointFormat.MODELOPT,
                "ct-nvfp4-qwen3", CheckpointFormat.COMPRESSED_TENSORS,
                "ct-nvfp4a16-head-qwen3", CheckpointFormat.COMPRESSED_TENSORS);
        for (Map.Entry<String, CheckpointFormat> entry : expected.entrySet()) {
            String path = SOURCE.resolve("tests/fixtures/models").resolve(entry.getKey()).toString();
            try (Model model = Model.load(path, new ModelOptions().backend(Backend.CPU).threads(1))) {
                ModelInfo info = model.info();
                assertEquals(entry.getValue(), info.checkpointFormat(), entry.getKey());
                Weights weights = entry.getValue() == CheckpointFormat.UNQUANTIZED ? Weights.BF16 : Weights.NVFP4_W4A16;
                assertEquals(weights, info.weights(), entry.getKey());
                assertEquals("qwen3", info.architecture(), entry.getKey());
                assertEquals(entry.getKey().equals("ct-nvfp4a16-head-qwen3"), info.kvCacheScales(), entry.getKey());
            }
        }
        try (Model model = Model.load(GOLDEN,
                new ModelOptions().weights(Weights.NVFP4_W4A16).backend(Backend.CPU).threads(1))) {
            assertEquals(CheckpointFormat.UNQUANTIZED, model.info().checkpointFormat());
            assertFalse(model.info().kvCacheScales());
        }
    }

    @Test
    void anOlderMinorIsRefusedClearly() throws Exception {
        assertEquals(0, Reset.abiMajor());
        assertEquals(12, Reset.abiMinor());
        for (long newerOrSame : new long[] {1200, 1201, 1299, 1300, 9900}) Reset.checkAbi(newerOrSame);
        // 0.11's reset_model_load knows no file_access.
        ResetException e = assertThrows(ResetException.class, () -> Reset.checkAbi(1100));
        assertEquals(Status.UNSUPPORTED, e.getStatus());
        assertEquals("libreset 0.11.0 is older than these bindings need (0.12 or newer): "
                + "it lacks functions or fields they use", e.getReason());
        ResetException latest = assertThrows(ResetException.class, () -> Reset.checkAbi(1199));
        assertTrue(latest.getReason().startsWith("libreset 0.11.99 is older"), latest.getMessage());
        for (long version : new long[] {1000, 900, 800, 700, 600, 500, 400, 300, 200, 100}) {
            ResetException older = assertThrows(ResetException.class, () -> Reset.checkAbi(version));
            assertTrue(older.getReason().startsWith("libreset 0." + version / 100 + ".0 is older"), older.getMessage());
        }
        ResetException major = assertThrows(ResetException.class, () -> Reset.checkAbi(10100)); // judged first
        assertTrue(major.getReason().contains("has ABI major 1"), major.getMessage());
    }

    @Test
    void penaltiesRoundTripAndOutOfRangeIsRefused() throws Exception {
        assertEquals(0f, new PolicyParams().presencePenalty());
        assertEquals(0f, new PolicyParams().frequencyPenalty());
        assertEquals(1f, new PolicyParams().repetitionPenalty());
        try (Model model = goldenOneThread(); Session session = model.newSession(16, 1)) {
            assertEquals(1f, session.policy().repetitionPenalty()); // generation_config.json sets none
            session.setPolicy(PolicyParams.fixed(0.7f).presencePenalty(1.5f).frequencyPenalty(0.5f)
                    .repetitionPenalty(1.25f));
            PolicyParams read = session.policy();
            assertEquals(PolicyKind.FIXED, read.kind());
            assertEquals(1.5f, read.presencePenalty()); // exact in float32
            assertEquals(0.5f, read.frequencyPenalty());
            assertEquals(1.25f, read.repetitionPenalty());
            session.setPolicy(read);
            assertEquals(1.5f, session.policy().presencePenalty());
            assertEquals(0.5f, session.policy().frequencyPenalty());
            assertEquals(1.25f, session.policy().repetitionPenalty());

            ResetException presence = assertThrows(ResetException.class,
                    () -> session.setPolicy(PolicyParams.greedy().presencePenalty(2.5f)));
            assertEquals(Status.INVALID_ARGUMENT, presence.getStatus());
            assertTrue(presence.getReason().contains("presence_penalty"), presence.getMessage());
            ResetException frequency = assertThrows(ResetException.class,
                    () -> session.setPolicy(PolicyParams.greedy().frequencyPenalty(-2.5f)));
            assertEquals(Status.INVALID_ARGUMENT, frequency.getStatus());
            assertTrue(frequency.getReason().contains("frequency_penalty"), frequency.getMessage());
            for (float r : new float[] {0.05f, 11f, Float.NaN, 0f}) {
                ResetException repetition = assertThrows(ResetException.class,
                        () -> session.setPolicy(PolicyParams.greedy().repetitionPenalty(r)));
                assertEquals(Status.INVALID_ARGUMENT, repetition.getStatus());
                assertTrue(repetition.getReason().contains("repetition_penalty"), repetition.getMessage());
            }
            // A refused policy changes nothing.
            assertEquals(PolicyKind.FIXED, session.policy().kind());
            assertEquals(1.5f, session.policy().presencePenalty());
            assertEquals(1.25f, session.policy().repetitionPenalty());
        }
        ResetException byRepetition = assertThrows(ResetException.class,
                () -> Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).repetitionPenalty(0.05f), null, null, 0));
        assertEquals(Status.INVALID_ARGUMENT, byRepetition.getStatus());
        assertTrue(byRepetition.getReason().contains("repetition_penalty"), byRepetition.getMessage());
        ResetException create = assertThrows(ResetException.class,
                () -> Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).frequencyPenalty(2.5f), null, null, 0));
        assertEquals(Status.INVALID_ARGUMENT, create.getStatus());
        assertTrue(create.getReason().contains("frequency_penalty"), create.getMessage());
        try (Policy policy = Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4), null, null, 0)) {
            ResetException set = assertThrows(ResetException.class,
                    () -> policy.setParams(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).presencePenalty(2.5f)));
            assertEquals(Status.INVALID_ARGUMENT, set.getStatus());
            assertTrue(set.getReason().contains("presence_penalty"), set.getMessage());
            ResetException repetition = assertThrows(ResetException.class,
                    () -> policy.setParams(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).repetitionPenalty(11f)));
            assertEquals(Status.INVALID_ARGUMENT, repetition.getStatus());
            assertTrue(repetition.getReason().contains("repetition_penalty"), repetition.getMessage());
        }
    }

    /**
     * Hugging Face's RepetitionPenaltyLogitsProcessor, written here: each token seen in the context, once,
     * has z > 0 divided by r and z <= 0 multiplied by r.
     */
    private static float[] repetitionPenalized(float[] logits, int[] seen, float r) {
        float[] out = logits.clone();
        boolean[] done = new boolean[logits.length];
        for (int token : seen) {
            if (done[token]) continue;
            done[token] = true;
            out[token] = logits[token] > 0 ? logits[token] / r : logits[token] * r;
        }
        return out;
    }

    /**
     * A standalone policy given its prompt with addContext draws (greedy) the argmax of the logits with the
     * context's lowered by the repetition penalty; reset forgets the context.
     */
    @Test
    void aStandalonePolicyLowersTheContextItWasGiven() throws Exception {
        float r = 2f;
        float[] logits = {0f, 2f, 1.5f, -1f}; // raw argmax 1, in the prompt; 2 / 2 = 1 < 1.5
        float[] negative = {-1f, -0.2f, -0.3f, -3f}; // raw argmax 1; -0.2 * 2 = -0.4 < -0.3 (multiplied)
        try (Policy policy = Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).kind(PolicyKind.GREEDY)
                .repetitionPenalty(r), null, null, 0)) {
            assertEquals(1, argmax(logits));
            assertEquals(1, policy.sample(logits).token()); // no context yet
            int[] prompt = {1, 3, 1};
            policy.addContext(prompt);
            int expected = argmax(repetitionPenalized(logits, prompt, r));
            assertEquals(2, expected);
            Policy.Sample sample = policy.sample(logits);
            assertEquals(expected, sample.token());
            assertEquals(policy.decide(logits).entropy(), sample.decision().entropy()); // decided on raw logits
            // Accepted tokens join the context: with 2 lowered too, 1 leads again (once, though the prompt
            // holds it twice).
            policy.accept(2);
            int[] seen = {1, 3, 1, 2};
            assertEquals(1, argmax(repetitionPenalized(logits, seen, r)));
            assertEquals(1, policy.sample(logits).token());
            ResetException negativeId = assertThrows(ResetException.class, () -> policy.addContext(new int[] {0, -1}));
            assertEquals(Status.OUT_OF_RANGE, negativeId.getStatus());
            policy.addContext(new int[0]);
            policy.addContext(null);
            assertEquals(0, policy.sample(new float[] {3f, 0f, 0f, 0f, 2f}).token()); // 0 was not recorded
            policy.reset();
            assertEquals(argmax(logits), policy.sample(logits).token()); // forgotten: the raw argmax
            assertEquals(1, policy.sample(negative).token());
            policy.addContext(new int[] {1});
            expected = argmax(repetitionPenalized(negative, new int[] {1}, r));
            assertEquals(2, expected);
            assertEquals(expected, policy.sample(negative).token());
        }
    }

    private static int[] greedyWithRepetitionPenalty(Model model, int[] prompt, float r) throws Exception {
        try (Session session = model.newSession(128, 1)) {
            session.setPolicy(PolicyParams.greedy().repetitionPenalty(r));
            session.prefill(prompt);
            List<Integer> got = new ArrayList<>();
            for (Step step : session.generate(16)) got.add(step.token());
            return got.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private static boolean contains(int[] tokens, int from, int to, int token) {
        for (int i = from; i < to; i++) if (tokens[i] == token) return true;
        return false;
    }

    /**
     * The fixture's plain greedy continuation repeats a prompt token; a repetition penalty of 1.5 makes another
     * choice there, and the first token it changes is one only the prompt holds.
     */
    @Test
    void aRepetitionPenaltyChangesGreedyDecoding() throws Exception {
        int[] prompt = ids("prompt.txt");
        try (Model model = goldenOneThread()) {
            int[] plain = greedyWithRepetitionPenalty(model, prompt, 1f);
            int[] penalised = greedyWithRepetitionPenalty(model, prompt, 1.5f);
            String both = Arrays.toString(plain) + " vs " + Arrays.toString(penalised);
            assertEquals(16, plain.length, both);
            assertEquals(16, penalised.length, both);
            assertFalse(Arrays.equals(plain, penalised), both);
            int first = 0;
            while (plain[first] == penalised[first]) first++;
            assertTrue(contains(prompt, 0, prompt.length, plain[first]), both);
            assertFalse(contains(plain, 0, first, plain[first]), both);
        }
    }

    /** log softmax(logits)[token] in double precision, independent of the library: the max-shifted sum of exp. */
    private static double rawLogprob(float[] logits, int token) {
        double shift = Double.NEGATIVE_INFINITY;
        for (float z : logits) shift = Math.max(shift, z);
        double sum = 0;
        for (float z : logits) sum += Math.exp(z - shift);
        return logits[token] - shift - Math.log(sum);
    }

    /**
     * The library sums exp(z - max) in FP32 in its own order, rounds z - max to FP32 and returns a float:
     * each costs ~1e-6 at this vocabulary (512) and these magnitudes (|logprob| ~ 4).  1e-4 leaves margin,
     * while a field left at 0 or read at the wrong offset is off by whole units.
     */
    private static final double LOGPROB_TOLERANCE = 1e-4;

    private static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
        return best;
    }

    @Test
    void aStepsLogprobIsLogSoftmaxOfTheRawLogitsAtItsToken() throws Exception {
        float[] logits;
        try (Model model = goldenOneThread(); Session session = model.newSession(64, 1)) {
            session.setPolicy(PolicyParams.greedy());
            session.prefill(ids("prompt.txt"));
            for (int i = 0; i < 3; i++) {
                logits = session.logits(0);
                Step step = session.step().get(0);
                double expected = rawLogprob(logits, step.token());
                assertEquals(argmax(logits), step.token(), step.toString());
                assertTrue(expected < -1, "the fixture's tokens are far from certain: a logprob of 0 cannot pass");
                assertTrue(step.logprob() <= 0, step.toString());
                assertEquals(expected, step.logprob(), LOGPROB_TOLERANCE, step.toString());
            }
            logits = session.logits(0);
        }
        // The standalone policy on the same logits: decide draws nothing (NaN), sample reports its draw's.
        try (Policy policy = Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 4).kind(PolicyKind.GREEDY),
                null, null, 0)) {
            assertTrue(Float.isNaN(policy.decide(logits).logprob()));
            Policy.Sample sample = policy.sample(logits);
            double expected = rawLogprob(logits, sample.token());
            assertEquals(argmax(logits), sample.token());
            assertTrue(expected < -1 && sample.decision().logprob() <= 0, sample.toString());
            assertEquals(expected, sample.decision().logprob(), LOGPROB_TOLERANCE, sample.toString());
        }
    }

    /**
     * Each entry's logprob is (z - max) - log sum exp(z - max) taken in FP32 and double by the library, in its
     * own order, and rounded to a float: within 2e-7 of the double-precision reference on this fixture, where
     * |logprob| is about 4-5 (a float's ulp there is 4.8e-7).  1e-5 leaves a wide margin yet is far below
     * anything a field read at the wrong offset would give.
     */
    private static final double TOP_LOGPROB_TOLERANCE = 1e-5;

    /** The n most likely ids by the raw logits: value descending, ties by the lower id (reset.h). */
    private static int[] mostLikely(float[] logits, int n) {
        return IntStream.range(0, logits.length).boxed()
                .sorted((a, b) -> logits[a] > logits[b] ? -1 : logits[a] < logits[b] ? 1 : Integer.compare(a, b))
                .limit(n).mapToInt(Integer::intValue).toArray();
    }

    /** step.topLogprobs() against the logits read before the step; the place of the chosen token, or -1. */
    private static int checkTopLogprobs(float[] logits, Step step, int n) {
        List<TokenLogprob> top = step.topLogprobs();
        assertEquals(n, top.size(), step.toString());
        // The tokens, in order, are the top n of the logits (the library orders by logit, so two entries whose
        // logprobs round to one float still come in id order), and their logprobs never increase.
        assertArrayEquals(mostLikely(logits, n), top.stream().mapToInt(TokenLogprob::token).toArray(), top.toString());
        int place = -1;
        for (int i = 0; i < n; i++) {
            TokenLogprob entry = top.get(i);
            if (i > 0) assertTrue(entry.logprob() <= top.get(i - 1).logprob(), top.toString());
            assertEquals(rawLogprob(logits, entry.token()), entry.logprob(), TOP_LOGPROB_TOLERANCE, entry.toString());
            if (entry.token() == step.token()) {
                place = i;
                // Exactly: the same float as the step's own logprob (reset.h).
                assertEquals(Float.floatToRawIntBits(step.logprob()), Float.floatToRawIntBits(entry.logprob()),
                        step.toString());
            }
        }
        return place;
    }

    @Test
    void topLogprobsAreTheMostLikelyTokensOfTheLogitsEachTokenWasDrawnFrom() throws Exception {
        try (Model model = goldenOneThread();
             Session session = model.newSession(new SessionOptions().maxContext(64).topLogprobs(5))) {
            session.setPolicy(PolicyParams.greedy());
            session.prefill(ids("prompt.txt"));
            for (int i = 0; i < 3; i++) {
                float[] logits = session.logits(0); // before the step: the distribution its token is drawn from
                Step step = session.step().get(0);
                assertEquals(0, checkTopLogprobs(logits, step, 5), "greedy: the first entry is the token: " + step);
                assertEquals(new TokenLogprob(step.token(), step.logprob()), step.topLogprobs().get(0));
            }
            // Sampled at T = 2 from the top 3: the chosen token is always among the top 5, not always first, and
            // the entries are still those of the raw logits.
            session.setPolicy(PolicyParams.fixed(2.0f).topK(3).seed(5));
            List<Integer> places = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                float[] logits = session.logits(0);
                places.add(checkTopLogprobs(logits, session.step().get(0), 5));
            }
            assertFalse(places.contains(-1), places.toString());
            assertTrue(places.stream().anyMatch(place -> place > 0), places.toString());
        }
    }

    @Test
    void noTopLogprobsUnlessAskedAndMoreThanTwentyIsRefused() throws Exception {
        int[] prompt = Arrays.copyOf(ids("prompt.txt"), 4);
        try (Model model = goldenOneThread()) {
            // The default is none, as is 0.
            SessionOptions zero = new SessionOptions().maxContext(16).topLogprobs(0);
            for (SessionOptions options : List.of(new SessionOptions(), zero)) {
                try (Session session = model.newSession(options)) {
                    session.prefill(prompt);
                    Step step = session.step().get(0);
                    assertTrue(step.token() >= 0 && step.topLogprobs().isEmpty(), step.toString());
                }
            }
            try (Session session = model.newSession(new SessionOptions().maxContext(16).topLogprobs(20))) {
                session.setPolicy(PolicyParams.greedy());
                session.prefill(prompt);
                float[] logits = session.logits(0);
                checkTopLogprobs(logits, session.step().get(0), 20); // RESET_MAX_TOP_LOGPROBS
            }
            for (int bad : new int[] {21, -1}) {
                ResetException e = assertThrows(ResetException.class,
                        () -> model.newSession(new SessionOptions().topLogprobs(bad)).close());
                assertEquals(Status.INVALID_ARGUMENT, e.getStatus());
                assertTrue(e.getReason().contains("top_logprobs"), e.getMessage());
            }
        }
    }

    @Test
    void aSequenceThatHasEndedReportsNoTopLogprobs() throws Exception {
        // Sequence 0 holds only EOS; a repetition penalty of 0.1 multiplies the logit of every token of a
        // sequence's context by 10 (z > 0), which makes the fixture's EOS (z ~ 1.04 after it) its greedy choice.
        // Sequence 1 gets the prompt too, whose tokens' logits lead once multiplied, so it goes on.
        try (Model model = goldenOneThread();
             Session session = model.newSession(new SessionOptions().maxContext(64).sequences(2).topLogprobs(5))) {
            int eos = model.info().eosIds()[0];
            session.setPolicy(PolicyParams.greedy().repetitionPenalty(0.1f));
            session.prefill(new int[] {eos});
            session.prefillSequence(1, ids("prompt.txt"));
            float[][] logits = {session.logits(0), session.logits(1)};
            List<Step> first = session.step();
            assertTrue(first.get(0).token() == eos && first.get(0).end(),
                    "the fixture's sequence 0 no longer ends at once: " + first.get(0));
            assertFalse(first.get(1).end(), first.get(1).toString());
            // The EOS was drawn, so its step has them; its raw logit is far from the top five.
            assertEquals(-1, checkTopLogprobs(logits[0], first.get(0), 5));
            checkTopLogprobs(logits[1], first.get(1), 5);
            List<Step> later = session.step();
            Step ended = later.get(0);
            assertTrue(ended.token() == -1 && ended.end() && Float.isNaN(ended.logprob()), ended.toString());
            assertTrue(ended.topLogprobs().isEmpty(), ended.toString());
            assertEquals(5, later.get(1).topLogprobs().size());
        }
    }

    // ---------------------------------------------------------------- stop conditions (0.5)

    /**
     * tests/unit/test_stop.cpp's prompt; with its policy (FIXED at T = 2, seed 3) the chat fixture writes
     * varied text and no end-of-generation id in the first 30 tokens (the C test checks that too).
     */
    private static final int[] STOP_PROMPT = {10, 11, 12, 13};

    /** The chat fixture (a tokenizer, a vocabulary of 512, random weights) on one thread. */
    private static Model chatOneThread() throws ResetException {
        return Model.load(CHAT, new ModelOptions().backend(Backend.CPU).threads(1));
    }

    /** A one-sequence session on model drawing as test_stop.cpp's do. */
    private static Session stopSession(Model model) throws ResetException {
        return stopSession(model, 3);
    }

    /** The same with another seed. */
    private static Session stopSession(Model model, long seed) throws ResetException {
        Session session = model.newSession(512, 1);
        session.setPolicy(PolicyParams.fixed(2.0f).seed(seed));
        return session;
    }

    /** What sequence 0 did from the prompt; end stays NONE when the bound was reached first. */
    private record Generation(List<Integer> tokens, List<String> texts, String text, EndReason end, int stopIndex,
            int length) {}

    /**
     * Resets the session, prefills the prompt and steps until the sequence ends or bound steps have run.
     * Each step's reason and stop index are checked against its end.
     */
    private static Generation generate(Session session, int bound) throws ResetException {
        session.reset();
        session.prefill(STOP_PROMPT);
        List<Integer> tokens = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        EndReason end = EndReason.NONE;
        int stopIndex = -1;
        while (tokens.size() < bound) {
            Step step = session.step().get(0);
            assertTrue(step.token() >= 0 && step.end() == (step.endReason() != EndReason.NONE), step.toString());
            if (step.endReason() != EndReason.STOP) assertEquals(-1, step.stopIndex(), step.toString());
            tokens.add(step.token());
            texts.add(step.text());
            if (step.end()) {
                end = step.endReason();
                stopIndex = step.stopIndex();
                break;
            }
        }
        return new Generation(tokens, texts, String.join("", texts), end, stopIndex, session.length(0));
    }

    /** The generation without stop conditions: 30 tokens, no end. */
    private static Generation reference(Session session) throws ResetException {
        session.clearStop();
        Generation ref = generate(session, 30);
        assertTrue(ref.end() == EndReason.NONE && ref.tokens().size() == 30 && ref.length() == 4 + 30
                && ref.text().codePointCount(0, ref.text().length()) >= 20,
                "the fixture's reference generation changed: " + ref);
        return ref;
    }

    /** n characters (code points) from the middle of text. */
    private static String middle(String text, int n) {
        int count = text.codePointCount(0, text.length());
        int from = text.offsetByCodePoints(0, (count - n) / 2);
        return text.substring(from, text.offsetByCodePoints(from, n));
    }

    private static int utf8Length(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }

    private static void assertPrefix(List<Integer> got, List<Integer> want, String message) {
        assertTrue(got.size() <= want.size() && got.equals(want.subList(0, got.size())), message);
    }

    @Test
    void maxTokensEndsAGenerationWithLength() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            Generation ref = reference(session);
            for (int n : new int[] {1, 10}) {
                session.setStop(new StopOptions().maxTokens(n));
                Generation got = generate(session, 30);
                String message = "maxTokens " + n + ": " + got + ", the reference " + ref.tokens();
                // The n-th token ends it and stays in the context.
                assertEquals(EndReason.LENGTH, got.end(), message);
                assertEquals(-1, got.stopIndex(), message);
                assertEquals(n, got.tokens().size(), message);
                assertPrefix(got.tokens(), ref.tokens(), message);
                assertEquals(4 + n, got.length(), message);
            }
        }
    }

    @Test
    void aStopStringEndsAGenerationWhereTheTextFirstHoldsIt() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            Generation ref = reference(session);
            String stop = middle(ref.text(), 4);
            int at = ref.text().indexOf(stop); // where it first occurs, perhaps before the cut
            int stopEnd = utf8Length(ref.text().substring(0, at + stop.length())); // in bytes, as tokens' texts
            for (boolean include : new boolean[] {false, true}) {
                session.setStop(new StopOptions().strings(stop).includeStopString(include));
                Generation got = generate(session, 30);
                String message = "stop \"" + stop + "\" (include " + include + "): " + got + ", the reference " + ref;
                assertEquals(EndReason.STOP, got.end(), message);
                assertEquals(0, got.stopIndex(), message);
                assertEquals(ref.text().substring(0, include ? at + stop.length() : at), got.text(), message);
                assertPrefix(got.tokens(), ref.tokens(), message);
                // It stopped at the token whose text completed the string, which leaves the context.
                int n = got.tokens().size();
                int before = utf8Length(String.join("", ref.texts().subList(0, n - 1)));
                assertTrue(before < stopEnd && before + utf8Length(ref.texts().get(n - 1)) >= stopEnd, message);
                assertEquals(4 + n - 1, got.length(), message);
            }
            // The index is the string's: a second string that never occurs comes first.
            session.setStop(new StopOptions().strings("\u007f\u0001\u007f\u0002", stop));
            Generation got = generate(session, 30);
            assertEquals(EndReason.STOP, got.end(), got.toString());
            assertEquals(1, got.stopIndex(), got.toString());
            assertEquals(ref.text().substring(0, at), got.text(), got.toString());
        }
    }

    @Test
    void aStopIdEndsAGenerationAtItsFirstDraw() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            Generation ref = reference(session);
            int id = ref.tokens().get(12);
            int first = ref.tokens().indexOf(id);
            session.setStop(new StopOptions().ids(id, 5000 % 512));
            Generation got = generate(session, 30);
            String message = "stop id " + id + " (first drawn at " + first + "): " + got + ", the reference " + ref;
            assertEquals(EndReason.STOP, got.end(), message);
            assertEquals(-1, got.stopIndex(), message);
            assertEquals(ref.tokens().subList(0, first + 1), got.tokens(), message);
            // Its text is reported (not a special token's), and it leaves the context as an end-of-generation
            // id does.
            assertEquals(String.join("", ref.texts().subList(0, first + 1)), got.text(), message);
            assertEquals(4 + first, got.length(), message);
        }
    }

    /** Draws an end-of-generation id at its 59th token (tests/unit/test_stop.cpp's ignore_eos test). */
    private static final long EOS_SEED = 7;

    @Test
    void ignoreEosGeneratesPastAnEndOfGenerationIdUntilMaxTokens() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model, EOS_SEED)) {
            final int n = 100;
            session.setStop(new StopOptions().maxTokens(n));
            Generation ended = generate(session, 2 * n);
            int eos = ended.tokens().size() - 1; // the end-of-generation id's step
            String seed = "seed " + EOS_SEED + " no longer draws an end-of-generation id before " + n + ": " + ended;
            assertEquals(EndReason.EOS, ended.end(), seed);
            assertTrue(ended.tokens().size() < n, seed);
            assertEquals(4 + eos, ended.length(), seed); // the id left the context
            session.setStop(new StopOptions().maxTokens(n).ignoreEos(true));
            // Step by step: the id's step is no end, and the same draws come up to it.
            session.reset();
            session.prefill(STOP_PROMPT);
            for (int k = 0; k <= eos; k++) {
                Step step = session.step().get(0);
                String message = "ignoreEos, step " + k + ": " + step + "; without it " + ended;
                assertEquals(ended.tokens().get(k).intValue(), step.token(), message);
                assertFalse(step.end(), message);
                assertEquals(EndReason.NONE, step.endReason(), message);
                if (k < eos) assertEquals(ended.texts().get(k), step.text(), message);
            }
            // The whole generation: maxTokens ends it, and the id entered the context.
            Generation got = generate(session, 2 * n);
            String message = "ignoreEos: " + got + "; without it " + ended.tokens();
            assertEquals(EndReason.LENGTH, got.end(), message);
            assertEquals(n, got.tokens().size(), message);
            assertPrefix(ended.tokens(), got.tokens(), message);
            assertEquals(4 + n, got.length(), message);
            // Options without it end at the id again.
            session.setStop(new StopOptions().maxTokens(n));
            assertEquals(ended, generate(session, 2 * n));
        }
    }

    @Test
    void aBadStopConditionIsRefusedAndTheOldOnesStay() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            session.setStop(new StopOptions().maxTokens(4));
            String[] seventeen = new String[17];
            Arrays.fill(seventeen, "x");
            Object[][] refused = {
                {new StopOptions().strings(""), Status.INVALID_ARGUMENT, "options->strings[0] is empty"},
                {new StopOptions().ids(1, 512), Status.OUT_OF_RANGE,
                    "options->ids[1] = 512 is outside the vocabulary [0, 512)"},
                {new StopOptions().strings("a".repeat(257)), Status.INVALID_ARGUMENT,
                    "options->strings[0] is longer than 256 bytes"},
                {new StopOptions().strings(seventeen), Status.INVALID_ARGUMENT,
                    "options->string_count = 17 is above 16"},
                {new StopOptions().maxTokens(-1), Status.INVALID_ARGUMENT, "options->max_tokens = -1 is negative"},
            };
            for (Object[] c : refused) {
                ResetException e = assertThrows(ResetException.class, () -> session.setStop((StopOptions) c[0]));
                assertEquals(c[1], e.getStatus(), e.getMessage());
                assertEquals(((Status) c[1]).cName(), e.getStatusName(), e.getMessage());
                assertTrue(e.getReason().contains((String) c[2]), e.getMessage());
            }
            // Refused in Java before the library: an unpaired surrogate (BAD_UTF8), U+0000, null.
            ResetException surrogate = assertThrows(ResetException.class,
                    () -> session.setStop(new StopOptions().strings("ok", "\ud800")));
            assertEquals(Status.BAD_UTF8, surrogate.getStatus());
            IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                    () -> session.setStop(new StopOptions().strings("ab", "\n\u0000User:")));
            assertTrue(nul.getMessage().startsWith("stop_string holds a NUL"), nul.getMessage());
            assertThrows(NullPointerException.class, () -> new StopOptions().strings("a", null));
            // None of those changed the conditions: maxTokens 4 still ends the generation.
            Generation got = generate(session, 30);
            assertEquals(EndReason.LENGTH, got.end(), got.toString());
            assertEquals(4, got.tokens().size(), got.toString());
        }
    }

    @Test
    void clearingTheStopConditionsLetsTheGenerationRunOn() throws Throwable {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            Generation ref = reference(session);
            String stop = middle(ref.text(), 6);
            List<Executable> clears = List.of(session::clearStop, () -> session.setStop(null),
                    () -> session.setStop(new StopOptions()));
            for (Executable clear : clears) {
                session.setStop(new StopOptions().strings(stop).ids(ref.tokens().get(5)).maxTokens(3));
                Generation got = generate(session, 30);
                assertEquals(EndReason.LENGTH, got.end(), "before clearing: " + got);
                assertEquals(3, got.tokens().size(), "before clearing: " + got);
                clear.execute();
                assertEquals(ref, generate(session, 30));
            }
        }
    }

    /**
     * heldText is what a stop string holds back: after each step of a running sequence, the text reported so
     * far and the held text together are what the generation without stop conditions had reported by then
     * (tests/unit/test_stop.cpp checks the same in C).
     */
    @Test
    void heldTextIsWhatTheStopStringHeldBack() throws Exception {
        try (Model model = chatOneThread(); Session session = stopSession(model)) {
            Generation ref = reference(session);
            String stop = middle(ref.text(), 4);
            session.setStop(new StopOptions().strings(stop));
            session.reset();
            session.prefill(STOP_PROMPT);
            StringBuilder reported = new StringBuilder();
            int held = 0; // the steps after which some text was held
            boolean ended = false;
            for (int k = 0; k < ref.tokens().size() && !ended; k++) {
                Step step = session.step().get(0);
                reported.append(step.text());
                ended = step.end();
                String text = session.heldText(0);
                String message = "step " + k + " (stop \"" + stop + "\"): reported \"" + reported + "\", held \""
                        + text + "\", " + step;
                if (ended) {
                    assertEquals("", text, "an ended sequence holds nothing: " + message);
                } else {
                    assertEquals(String.join("", ref.texts().subList(0, k + 1)), reported + text, message);
                    if (!text.isEmpty()) held++;
                }
            }
            assertTrue(ended, "stop \"" + stop + "\" never ended the generation; the reference " + ref);
            assertTrue(held > 0, "stop \"" + stop + "\" held no text back; the reference " + ref.texts());
            // The sequence is checked by the library, with its message.
            for (int sequence : new int[] {1, -1}) {
                ResetException e = assertThrows(ResetException.class, () -> session.heldText(sequence));
                assertEquals(Status.OUT_OF_RANGE, e.getStatus(), e.getMessage());
                assertEquals("RESET_ERR_OUT_OF_RANGE", e.getStatusName(), e.getMessage());
                assertTrue(e.getReason().contains("sequence " + sequence + " is outside [0, 1)"), e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- cutting sequences back (0.6)

    /** tests/unit/test_truncate.cpp's prompt. */
    private static final int[] TRUNCATE_PROMPT = {10, 11, 12, 13, 14, 15};

    /**
     * A two-sequence session on model drawing at a fixed T = 1.5 with a seed, so the two sequences draw
     * different tokens; an end-of-generation id does not end them (ignoreEos), so every drawn token enters
     * the context.
     */
    private static Session truncateSession(Model model) throws ResetException {
        Session session = model.newSession(256, 2);
        session.setPolicy(PolicyParams.fixed(1.5f).seed(5));
        session.setStop(new StopOptions().ignoreEos(true));
        return session;
    }

    /** Runs n decode steps: entry i holds the tokens sequence i drew, none of which ended it. */
    private static int[][] drawn(Session session, int sequences, int n) throws ResetException {
        int[][] out = new int[sequences][n];
        for (int k = 0; k < n; k++) {
            List<Step> steps = session.step();
            for (int i = 0; i < sequences; i++) {
                Step step = steps.get(i);
                assertTrue(step.token() >= 0 && !step.end(), "step " + k + ", sequence " + i + ": " + step);
                out[i][k] = step.token();
            }
        }
        return out;
    }

    private static int[] joined(int[] a, int[] b) {
        return IntStream.concat(Arrays.stream(a), Arrays.stream(b)).toArray();
    }

    private static void assertStatus(Status status, String reason, Executable call) {
        ResetException e = assertThrows(ResetException.class, call);
        assertEquals(status, e.getStatus(), e.getMessage());
        assertTrue(e.getReason().contains(reason), e.getMessage() + " (want ..." + reason + "...)");
    }

    /**
     * tokens() is the prompt and each sequence's own draws; cut back to the prompt less its last token and
     * given that token again, each sequence's sampler starts over and draws exactly what it drew the first
     * time.
     */
    @Test
    void sequencesCutBackToTheirPromptDrawTheSameSeededTokensAgain() throws Exception {
        try (Model model = chatOneThread(); Session session = truncateSession(model)) {
            session.prefill(TRUNCATE_PROMPT);
            int[][] first = drawn(session, 2, 10);
            assertFalse(Arrays.equals(first[0], first[1]), "both sequences drew " + Arrays.toString(first[0])
                    + ": the comparison below could not tell them apart");
            for (int i = 0; i < 2; i++) assertArrayEquals(joined(TRUNCATE_PROMPT, first[i]), session.tokens(i));
            int kept = TRUNCATE_PROMPT.length - 1;
            session.truncate(kept);
            for (int i = 0; i < 2; i++) {
                assertEquals(kept, session.length(i));
                assertArrayEquals(Arrays.copyOf(TRUNCATE_PROMPT, kept), session.tokens(i));
            }
            session.prefill(Arrays.copyOfRange(TRUNCATE_PROMPT, kept, TRUNCATE_PROMPT.length));
            int[][] again = drawn(session, 2, 10);
            for (int i = 0; i < 2; i++) {
                assertArrayEquals(first[i], again[i], "sequence " + i + " regenerated from the same prompt");
            }
        }
    }

    /**
     * A sequence cut back has no logits until its next prefill; a cut past what a sequence holds, or of a
     * sequence the session lacks, is refused and changes nothing; truncateSequence leaves the other
     * sequences as they were, and a sequence that holds exactly the length asked for keeps its logits.
     */
    @Test
    void aCutSequenceNeedsAPrefillAndBadCutsAreRefused() throws Exception {
        try (Model model = chatOneThread(); Session session = truncateSession(model)) {
            final int prompt = TRUNCATE_PROMPT.length;
            session.prefill(TRUNCATE_PROMPT);
            drawn(session, 2, 3);
            final int held = prompt + 3;
            assertStatus(Status.OUT_OF_RANGE, "length " + (held + 1) + " is outside [0, " + held + "]",
                    () -> session.truncate(held + 1));
            assertStatus(Status.OUT_OF_RANGE, "length -1 is outside", () -> session.truncate(-1));
            assertStatus(Status.OUT_OF_RANGE, "is outside", () -> session.truncateSequence(1, held + 1));
            for (int sequence : new int[] {2, -1}) {
                String reason = "sequence " + sequence + " is outside [0, 2)";
                assertStatus(Status.OUT_OF_RANGE, reason, () -> session.truncateSequence(sequence, 1));
                assertStatus(Status.OUT_OF_RANGE, reason, () -> session.tokens(sequence));
            }
            // The refusals changed nothing: both sequences still hold everything and step on.
            assertEquals(held, session.length(0));
            assertEquals(held, session.length(1));
            drawn(session, 2, 1);

            // One sequence cut back: the other keeps its tokens and logits.
            int[] tokens0 = session.tokens(0);
            float[] logits0 = session.logits(0);
            session.truncateSequence(1, 2);
            assertEquals(2, session.length(1));
            assertArrayEquals(Arrays.copyOf(TRUNCATE_PROMPT, 2), session.tokens(1));
            assertEquals(held + 1, session.length(0));
            assertArrayEquals(tokens0, session.tokens(0));
            assertArrayEquals(logits0, session.logits(0));
            assertStatus(Status.STATE, "reset_truncate", () -> session.logits(1));
            assertStatus(Status.STATE, "sequence 1 has no logits", session::step);
            assertEquals(held + 1, session.length(0), "the refused step changed sequence 0");
            assertEquals(2, session.length(1), "the refused step changed sequence 1");
            session.prefillSequence(1, Arrays.copyOfRange(TRUNCATE_PROMPT, 2, prompt));
            assertEquals(held + 1, session.length(0));
            assertEquals(prompt, session.length(1));
            drawn(session, 2, 1);

            // Truncate to what sequence 1 holds (the prompt and one draw): it is left as it is, logits
            // included, while sequence 0 is cut back.
            float[] logits1 = session.logits(1);
            session.truncate(prompt + 1);
            assertArrayEquals(logits1, session.logits(1));
            assertStatus(Status.STATE, "reset_truncate", () -> session.logits(0));
            assertStatus(Status.STATE, "sequence 0 has no logits", session::step);
            session.truncate(0);
            assertStatus(Status.STATE, "nothing to decode from", session::step);
            assertArrayEquals(new int[0], session.tokens(0));
        }
    }

    // ------------------------------------------------------------------ logit bias (0.6)

    /** tests/unit/test_logit_bias.cpp's prompt. */
    private static final int[] LOGIT_BIAS_PROMPT = {10, 11, 12, 13};

    /**
     * A session of the given sequences on model under params; an end-of-generation id does not end a
     * sequence (ignoreEos), so every step draws a token.
     */
    private static Session logitBiasSession(Model model, int sequences, PolicyParams params) throws ResetException {
        Session session = model.newSession(512, sequences);
        try {
            session.setPolicy(params);
            session.setStop(new StopOptions().ignoreEos(true));
            return session;
        } catch (ResetException | RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** Draws at a fixed T = 1.0 with a seed. */
    private static PolicyParams sampledPolicy() {
        return PolicyParams.fixed(1.0f).seed(21);
    }

    /** logits with biases[i] added to tokens[i], as reset.h says: one float addition per listed token. */
    private static float[] biased(float[] logits, int[] tokens, float[] biases) {
        float[] out = logits.clone();
        for (int i = 0; i < tokens.length; i++) out[tokens[i]] += biases[i];
        return out;
    }

    /**
     * Greedy draws the argmax of the raw logits plus the bias (the argmax banned, +5 on the third most likely
     * token), while the step's logprob is still the raw log-softmax of the token drawn.
     */
    @Test
    void greedyDrawsTheArgmaxOfTheBiasedLogitsAndLogprobStaysRaw() throws Exception {
        try (Model model = chatOneThread(); Session session = logitBiasSession(model, 1, PolicyParams.greedy())) {
            session.prefill(LOGIT_BIAS_PROMPT);
            float[] logits = session.logits(0);
            int[] top = mostLikely(logits, 3);
            int[] tokens = {top[0], top[2]};
            float[] biases = {Float.NEGATIVE_INFINITY, 5.0f};
            session.setLogitBias(tokens, biases);
            for (int i = 0; i < 5; i++) {
                if (i > 0) logits = session.logits(0);
                int expected = argmax(biased(logits, tokens, biases));
                if (i == 0) {
                    // Neither the raw argmax, nor what the ban alone gives: both entries count.
                    assertEquals(top[2], expected, "the fixture's logits changed: top " + Arrays.toString(top));
                    assertEquals(top[1], argmax(biased(logits, new int[] {top[0]}, new float[] {biases[0]})));
                    // The biased log-softmax of the token is far from the raw one: a logprob of it cannot pass.
                    assertTrue(Math.abs(rawLogprob(biased(logits, tokens, biases), expected)
                            - rawLogprob(logits, expected)) > 1, "the bias barely moves token " + expected + "'s logprob");
                }
                Step step = session.step().get(0);
                assertEquals(expected, step.token(), "step " + i + ": the argmax of the biased logits (raw argmax "
                        + argmax(logits) + ")");
                assertTrue(step.token() != top[0], step.toString());
                assertEquals(rawLogprob(logits, step.token()), step.logprob(), LOGPROB_TOLERANCE, step.toString());
            }
        }
    }

    /**
     * At T = 1.0, +100 on a token draws it at every step of every sequence; a bias set and cleared (or set to
     * nothing) before the prefill leaves the seeded draws exactly as they are without one.
     */
    @Test
    void aPlusHundredBiasIsAlwaysDrawnAndAClearedOneChangesNothing() throws Exception {
        final int sequences = 2;
        try (Model model = chatOneThread()) {
            try (Session forced = logitBiasSession(model, sequences, sampledPolicy())) {
                forced.setLogitBias(new int[] {300}, new float[] {100.0f});
                forced.prefill(LOGIT_BIAS_PROMPT);
                int[][] got = drawn(forced, sequences, 20);
                for (int i = 0; i < sequences; i++) {
                    for (int token : got[i]) {
                        assertEquals(300, token, "sequence " + i + " with +100 on 300: " + Arrays.toString(got[i]));
                    }
                }
            }
            int[][] want;
            try (Session plain = logitBiasSession(model, sequences, sampledPolicy())) {
                plain.prefill(LOGIT_BIAS_PROMPT);
                want = drawn(plain, sequences, 15);
            }
            assertFalse(Arrays.equals(want[0], want[1])
                    || Arrays.stream(want).flatMapToInt(Arrays::stream).anyMatch(token -> token == 300),
                    "the unbiased draws " + Arrays.deepToString(want)
                    + ": the comparisons below could not tell a bias left in force");
            for (int k = 0; k < 2; k++) {
                try (Session session = logitBiasSession(model, sequences, sampledPolicy())) {
                    session.setLogitBias(new int[] {300, want[0][0]}, new float[] {100.0f, Float.NEGATIVE_INFINITY});
                    if (k == 0) {
                        session.clearLogitBias();
                    } else {
                        session.setLogitBias(new int[0], new float[0]);
                    }
                    session.prefill(LOGIT_BIAS_PROMPT);
                    int[][] got = drawn(session, sequences, 15);
                    assertTrue(Arrays.deepEquals(want, got), (k == 0 ? "after clearLogitBias: " : "after empty arrays: ")
                            + Arrays.deepToString(got) + ", without a bias " + Arrays.deepToString(want));
                }
            }
        }
    }

    /**
     * A bad logit bias is refused with its status and leaves the one in force (+100 on 42) as it was; that one
     * stays through reset(), truncate and setPolicy.
     */
    @Test
    void aBadLogitBiasIsRefusedAndTheOldOneStays() throws Exception {
        try (Model model = chatOneThread(); Session session = logitBiasSession(model, 1, PolicyParams.greedy())) {
            session.setLogitBias(new int[] {42}, new float[] {100.0f});
            float inf = Float.POSITIVE_INFINITY;
            assertStatus(Status.INVALID_ARGUMENT, "entries[0].bias",
                    () -> session.setLogitBias(new int[] {1}, new float[] {Float.NaN}));
            assertStatus(Status.INVALID_ARGUMENT, "entries[1].bias",
                    () -> session.setLogitBias(new int[] {1, 2}, new float[] {0.5f, inf}));
            assertStatus(Status.INVALID_ARGUMENT, "outside [-100, 100]",
                    () -> session.setLogitBias(new int[] {1}, new float[] {150.0f}));
            assertStatus(Status.INVALID_ARGUMENT, "outside [-100, 100]",
                    () -> session.setLogitBias(new int[] {1}, new float[] {-101.0f}));
            assertStatus(Status.INVALID_ARGUMENT, "token 7 is listed twice",
                    () -> session.setLogitBias(new int[] {7, 3, 7}, new float[] {1.0f, 1.0f, -1.0f}));
            assertStatus(Status.OUT_OF_RANGE, "entries[0].token = 512 is outside the vocabulary",
                    () -> session.setLogitBias(new int[] {512}, new float[] {1.0f}));
            assertStatus(Status.OUT_OF_RANGE, "entries[1].token = -1 is outside the vocabulary",
                    () -> session.setLogitBias(new int[] {3, -1}, new float[] {1.0f, 1.0f}));
            int[] many = IntStream.range(0, 1025).map(i -> i % 512).toArray();
            float[] ones = new float[1025];
            Arrays.fill(ones, 1.0f);
            assertStatus(Status.INVALID_ARGUMENT, "RESET_MAX_LOGIT_BIAS", () -> session.setLogitBias(many, ones));
            float[] bans = new float[512];
            Arrays.fill(bans, Float.NEGATIVE_INFINITY);
            assertStatus(Status.INVALID_ARGUMENT, "every token of the vocabulary is banned",
                    () -> session.setLogitBias(IntStream.range(0, 512).toArray(), bans));
            IllegalArgumentException lengths = assertThrows(IllegalArgumentException.class,
                    () -> session.setLogitBias(new int[] {1, 2}, new float[] {1.0f}));
            assertEquals("2 tokens but 1 biases", lengths.getMessage());
            for (String change : new String[] {"", "reset", "truncate", "setPolicy"}) {
                if (change.equals("truncate")) {
                    session.truncate(1); // back to the first token of what the session holds
                } else if (!change.isEmpty()) {
                    session.reset();
                }
                if (change.equals("setPolicy")) session.setPolicy(PolicyParams.fixed(0.7f));
                session.prefill(LOGIT_BIAS_PROMPT);
                int[] got = drawn(session, 1, 5)[0];
                for (int token : got) {
                    assertEquals(42, token, "after the refusals (then " + change + "): " + Arrays.toString(got));
                }
            }
        }
    }

    // ---------------------------------------------------------------- copying a sequence (0.7)

    /**
     * Draws at truncateSession's T = 1.5 and seed, from the topK most likely tokens (1: a draw that depends on
     * nothing but the logits; 0: all of them).
     */
    private static PolicyParams copyPolicy(int topK) {
        return PolicyParams.fixed(1.5f).seed(5).topK(topK);
    }

    /** truncateSession drawing under copyPolicy(topK), prefilled with TRUNCATE_PROMPT and 3 draws in. */
    private static Session copySession(Model model, int topK) throws ResetException {
        Session session = truncateSession(model);
        try {
            session.setPolicy(copyPolicy(topK));
            session.prefill(TRUNCATE_PROMPT);
            drawn(session, 2, 3);
            return session;
        } catch (ResetException | RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** Asserts that sequence i of session holds tokens, with logits. */
    private static void assertHolds(Session session, int i, int[] tokens, float[] logits, String when)
            throws ResetException {
        assertArrayEquals(tokens, session.tokens(i), when + ", sequence " + i + "'s tokens");
        assertEquals(tokens.length, session.length(i), when + ", sequence " + i + "'s length");
        assertArrayEquals(logits, session.logits(i), when + ", sequence " + i + "'s logits");
    }

    /**
     * A sequence made to hold other tokens, then copied from sequence 0, holds sequence 0's tokens and logits,
     * which stay as they were; drawing the most likely token, both go on alike.  Drawing from all tokens
     * afterwards, both draw exactly what the two sequences of a session that never copied draw from the same
     * state: the copy took the draw counter and draws with its own key.
     */
    @Test
    void aCopiedSequenceContinuesAsItsSourceButDrawsWithItsOwnKey() throws Exception {
        final int alike = 8;
        final int sampled = 10;
        try (Model model = chatOneThread()) {
            int[][] want;
            try (Session lockstep = copySession(model, 1)) {
                int[][] first = drawn(lockstep, 2, alike);
                assertArrayEquals(first[0], first[1], "top_k = 1: the two sequences were not in lockstep");
                lockstep.setPolicy(copyPolicy(0));
                want = drawn(lockstep, 2, sampled);
                assertFalse(Arrays.equals(want[0], want[1]), "both sequences drew " + Arrays.toString(want[0])
                        + ": the comparison below could not tell the keys apart");
            }
            try (Session session = copySession(model, 1)) {
                session.truncateSequence(1, 2);
                session.prefillSequence(1, new int[] {40, 41, 42, 43});
                int[] tokens0 = session.tokens(0);
                float[] logits0 = session.logits(0);
                assertFalse(Arrays.equals(tokens0, session.tokens(1)) || Arrays.equals(logits0, session.logits(1)),
                        "sequence 1 holds what sequence 0 does: the copy below could not be told apart");
                session.copySequence(0, 1);
                for (int i = 0; i < 2; i++) assertHolds(session, i, tokens0, logits0, "after copySequence(0, 1)");
                int[][] got = drawn(session, 2, alike);
                assertArrayEquals(got[0], got[1], "drawing the most likely token, the copy and its source");
                for (int i = 0; i < 2; i++) assertArrayEquals(joined(tokens0, got[0]), session.tokens(i));
                session.setPolicy(copyPolicy(0));
                int[][] again = drawn(session, 2, sampled);
                assertTrue(Arrays.deepEquals(want, again), "drawing from all tokens: " + Arrays.deepToString(again)
                        + ", the sequences that never copied " + Arrays.deepToString(want));
            }
        }
    }

    /**
     * A copy from or to a sequence the session lacks is refused and changes nothing; a copy of a sequence
     * onto itself does nothing.
     */
    @Test
    void aBadCopyIsRefusedAndChangesNothing() throws Exception {
        try (Model model = chatOneThread(); Session session = copySession(model, 0)) {
            int[][] tokens = {session.tokens(0), session.tokens(1)};
            float[][] logits = {session.logits(0), session.logits(1)};
            assertFalse(Arrays.equals(tokens[0], tokens[1]), "both sequences hold " + Arrays.toString(tokens[0])
                    + ": a copy between them could not be told apart");
            for (int[] c : new int[][] {{2, 0, 2}, {0, 2, 2}, {-1, 1, -1}, {1, -1, -1}}) {
                assertStatus(Status.OUT_OF_RANGE, "sequence " + c[2] + " is outside [0, 2)",
                        () -> session.copySequence(c[0], c[1]));
            }
            for (int i = 0; i < 2; i++) session.copySequence(i, i);
            for (int i = 0; i < 2; i++) assertHolds(session, i, tokens[i], logits[i], "after the refused copies");
            drawn(session, 2, 1);
        }
    }

    // ---------------------------------------------------------------- saving and loading a sequence (0.8)

    /**
     * Draws alike steps from the most likely token (copyPolicy(1)), then sampled steps from all tokens
     * (copyPolicy(0)): the draws of each, sequence by sequence.
     */
    private static int[][][] continuation(Session session, int alike, int sampled) throws ResetException {
        session.setPolicy(copyPolicy(1));
        int[][] first = drawn(session, 2, alike);
        session.setPolicy(copyPolicy(0));
        return new int[][][] {first, drawn(session, 2, sampled)};
    }

    /**
     * A sequence saved after a prompt and sampled draws, then loaded into the other sequence of its session,
     * holds the saved tokens and logits bit for bit, and the saved one stays as it was; drawing the most
     * likely token, both go on alike.  Drawing from all tokens afterwards, both draw exactly what the two
     * sequences draw after copySequence from the same state, and end with the same logits: the file carried
     * the KV cache and the draw counter, and the loaded sequence draws with its own key.
     */
    @Test
    void aSavedSequenceLoadsIntoAnotherSequenceAsACopyWould(@TempDir Path dir) throws Exception {
        final int alike = 8;
        final int sampled = 10;
        String path = dir.resolve("sequence0.safetensors").toString();
        try (Model model = chatOneThread(); Session copied = copySession(model, 0);
                Session session = copySession(model, 0)) {
            copied.copySequence(0, 1);
            int[][][] want = continuation(copied, alike, sampled);
            assertFalse(Arrays.equals(want[1][0], want[1][1]), "both sequences drew " + Arrays.toString(want[1][0])
                    + ": the comparison below could not tell the keys apart");

            int[] tokens0 = session.tokens(0);
            float[] logits0 = session.logits(0);
            assertFalse(Arrays.equals(tokens0, session.tokens(1)) || Arrays.equals(logits0, session.logits(1)),
                    "sequence 1 holds what sequence 0 does: the load below could not be told apart");
            session.saveSequence(0, path);
            assertHolds(session, 0, tokens0, logits0, "after saveSequence(0)");
            session.loadSequence(1, path);
            for (int i = 0; i < 2; i++) {
                assertHolds(session, i, tokens0, logits0, "after loadSequence(1) of sequence 0's file");
            }
            int[][][] got = continuation(session, alike, sampled);
            assertArrayEquals(got[0][0], got[0][1],
                    "drawing the most likely token, the loaded sequence and the saved one");
            assertTrue(Arrays.deepEquals(want, got), "the draws after the load, " + Arrays.deepToString(got)
                    + ", are not the ones after a copy, " + Arrays.deepToString(want));
            for (int i = 0; i < 2; i++) {
                assertHolds(session, i, copied.tokens(i), copied.logits(i),
                        "after the draws, beside the copied session");
            }
        }
    }

    /**
     * Each sequence of a session, saved after a prompt and sampled draws and loaded into the same sequence of
     * a new session with the same policy, holds the saved tokens and logits bit for bit; the new session then
     * draws from all tokens exactly what the saved one draws, and ends with its tokens and logits bit for bit:
     * the file carries the KV cache, the logits and the sampler's state, its draw counter included.
     */
    @Test
    void aSavedSequenceLoadsIntoANewSessionAndContinuesAsItWould(@TempDir Path dir) throws Exception {
        final int sampled = 10;
        try (Model model = chatOneThread(); Session saved = copySession(model, 0);
                Session loaded = truncateSession(model)) {
            int[][] tokens = {saved.tokens(0), saved.tokens(1)};
            float[][] logits = {saved.logits(0), saved.logits(1)};
            assertFalse(Arrays.equals(tokens[0], tokens[1]), "both sequences hold " + Arrays.toString(tokens[0])
                    + ": loading one file for the other could not be told apart");
            String[] paths = new String[2];
            for (int i = 0; i < 2; i++) {
                paths[i] = dir.resolve("sequence" + i + ".safetensors").toString();
                saved.saveSequence(i, paths[i]);
            }
            assertLoadsAndContinues(saved, loaded, sampled, tokens, logits, "loadSequence",
                    i -> loaded.loadSequence(i, paths[i]));
        }
    }

    /** How a test gives saved sequence i to the new session. */
    private interface SequenceLoad {
        void load(int sequence) throws ResetException;
    }

    /**
     * Each of saved's two sequences (tokens[i], logits[i]) given to the same sequence of `loaded`, a new
     * session, with saved's policy, by load: it holds them bit for bit, draws from all tokens exactly what
     * saved draws, and ends with saved's tokens and logits.
     */
    private static void assertLoadsAndContinues(Session saved, Session loaded, int sampled, int[][] tokens,
            float[][] logits, String name, SequenceLoad load) throws ResetException {
        int[][] want = drawn(saved, 2, sampled);
        loaded.setPolicy(copyPolicy(0));
        for (int i = 0; i < 2; i++) load.load(i);
        for (int i = 0; i < 2; i++) {
            assertHolds(loaded, i, tokens[i], logits[i], "after " + name + " into a new session");
        }
        int[][] got = drawn(loaded, 2, sampled);
        assertTrue(Arrays.deepEquals(want, got), "drawing from all tokens, the new session drew "
                + Arrays.deepToString(got) + ", the saved one " + Arrays.deepToString(want));
        for (int i = 0; i < 2; i++) {
            assertHolds(loaded, i, saved.tokens(i), saved.logits(i), "after the draws, beside the saved session");
        }
    }

    /**
     * A load of a missing file (IO), of a file saved from a session with another KV cache type (SHAPE, FP32
     * into BF16 and BF16 into FP32), of a truncated file (FORMAT) or into a sequence the session lacks
     * (OUT_OF_RANGE) is refused and leaves every sequence exactly as it was, and the session goes on.  A save
     * of a sequence the session lacks, or into a folder that does not exist, is refused and writes nothing.
     */
    @Test
    void aBadLoadIsRefusedAndChangesNothing(@TempDir Path dir) throws Exception {
        try (Model model = chatOneThread(); Session session = copySession(model, 0);
                Session fp32 = model.newSession(new SessionOptions().maxContext(256).kvCache(KvCache.FP32))) {
            String good = dir.resolve("sequence0.safetensors").toString();
            session.saveSequence(0, good);
            byte[] data = Files.readAllBytes(Paths.get(good));
            String truncated = dir.resolve("truncated.safetensors").toString();
            Files.write(Paths.get(truncated), Arrays.copyOf(data, data.length / 2));
            fp32.prefill(TRUNCATE_PROMPT);
            String fp32File = dir.resolve("fp32.safetensors").toString();
            fp32.saveSequence(0, fp32File);
            int[][] tokens = {session.tokens(0), session.tokens(1)};
            float[][] logits = {session.logits(0), session.logits(1)};
            assertFalse(Arrays.equals(tokens[0], tokens[1]), "both sequences hold " + Arrays.toString(tokens[0])
                    + ": a load of sequence 0's file into 1 could not be told apart");

            String missing = dir.resolve("missing.safetensors").toString();
            assertStatus(Status.IO, missing, () -> session.loadSequence(1, missing));
            assertStatus(Status.SHAPE, "a KV cache of fp32; this session has bf16",
                    () -> session.loadSequence(1, fp32File));
            assertStatus(Status.FORMAT, truncated, () -> session.loadSequence(1, truncated));
            for (int bad : new int[] {2, -1}) {
                String outside = "sequence " + bad + " is outside [0, 2)";
                assertStatus(Status.OUT_OF_RANGE, outside, () -> session.loadSequence(bad, good));
                Path path = dir.resolve("sequence" + bad + ".safetensors");
                assertStatus(Status.OUT_OF_RANGE, outside, () -> session.saveSequence(bad, path.toString()));
                assertFalse(Files.exists(path), "a refused save left " + path);
            }
            Path nowhere = dir.resolve("no-such-folder").resolve("sequence0.safetensors");
            assertStatus(Status.IO, nowhere.toString(), () -> session.saveSequence(0, nowhere.toString()));
            assertFalse(Files.exists(nowhere), "a refused save left " + nowhere);
            for (int i = 0; i < 2; i++) {
                assertHolds(session, i, tokens[i], logits[i], "after the refused loads and saves");
            }
            int[] fp32Tokens = fp32.tokens(0);
            float[] fp32Logits = fp32.logits(0);
            assertStatus(Status.SHAPE, "a KV cache of bf16; this session has fp32", () -> fp32.loadSequence(0, good));
            assertHolds(fp32, 0, fp32Tokens, fp32Logits, "after the refused load");

            // The refusals left the file and the session as they were: the same load now succeeds.
            session.loadSequence(1, good);
            assertHolds(session, 1, tokens[0], logits[0], "after loadSequence(1) of sequence 0's file");
            drawn(session, 2, 1);
        }
    }

    // ---------------------------------------------------------------- a sequence's state in memory (0.9)

    /**
     * Each sequence of a session, saved to bytes after a prompt and sampled draws, is the bytes saveSequence
     * writes to its file, and the save changes nothing.  The bytes of sequence 0, loaded into the other
     * sequence of another session, give it sequence 0's tokens and logits bit for bit; each sequence's bytes,
     * loaded into the same sequence of a new session with the same policy, give it the saved tokens and
     * logits, and the new session then draws from all tokens exactly what the saved one draws, ending with its
     * tokens and logits.
     */
    @Test
    void aSequenceSavedToBytesIsItsFileAndLoadsAsTheFileDoes(@TempDir Path dir) throws Exception {
        final int sampled = 10;
        try (Model model = chatOneThread(); Session saved = copySession(model, 0);
                Session other = copySession(model, 0); Session loaded = truncateSession(model)) {
            int[][] tokens = {saved.tokens(0), saved.tokens(1)};
            float[][] logits = {saved.logits(0), saved.logits(1)};
            byte[][] states = new byte[2][];
            for (int i = 0; i < 2; i++) {
                states[i] = saved.saveSequenceToBytes(i);
                assertHolds(saved, i, tokens[i], logits[i], "after saveSequenceToBytes");
                Path path = dir.resolve("sequence" + i + ".safetensors");
                saved.saveSequence(i, path.toString());
                assertArrayEquals(Files.readAllBytes(path), states[i], "sequence " + i + "'s bytes and its file");
            }
            assertFalse(Arrays.equals(tokens[0], tokens[1]) || Arrays.equals(states[0], states[1]),
                    "both sequences hold " + Arrays.toString(tokens[0])
                    + ": loading one's bytes for the other could not be told apart");

            other.loadSequenceFromBytes(1, states[0]);
            assertHolds(other, 1, tokens[0], logits[0], "after loadSequenceFromBytes(1) of sequence 0's bytes");

            assertLoadsAndContinues(saved, loaded, sampled, tokens, logits, "loadSequenceFromBytes",
                    i -> loaded.loadSequenceFromBytes(i, states[i]));
        }
    }

    /**
     * Bytes that are no sequence's state are refused with FORMAT, naming the memory: a truncated state and an
     * empty array (the library's refusal, not the NULL data it would take for a bad argument).  The bytes of
     * an FP32 cache's sequence are SHAPE in a BF16 session, and a sequence the session lacks is OUT_OF_RANGE
     * for both calls.  Every refusal leaves the sequences exactly as they were, and the same load then
     * succeeds.  Null data is refused before C, naming it.
     */
    @Test
    void badSequenceBytesAreRefusedAndChangeNothing() throws Exception {
        try (Model model = chatOneThread(); Session session = copySession(model, 0);
                Session fp32 = model.newSession(new SessionOptions().maxContext(256).kvCache(KvCache.FP32))) {
            byte[] good = session.saveSequenceToBytes(0);
            fp32.prefill(TRUNCATE_PROMPT);
            byte[] fp32State = fp32.saveSequenceToBytes(0);
            int[][] tokens = {session.tokens(0), session.tokens(1)};
            float[][] logits = {session.logits(0), session.logits(1)};
            assertFalse(Arrays.equals(tokens[0], tokens[1]), "both sequences hold " + Arrays.toString(tokens[0])
                    + ": a load of sequence 0's bytes into 1 could not be told apart");

            assertStatus(Status.FORMAT, "'<memory>'",
                    () -> session.loadSequenceFromBytes(1, Arrays.copyOf(good, good.length / 2)));
            assertStatus(Status.FORMAT, "truncated",
                    () -> session.loadSequenceFromBytes(1, Arrays.copyOf(good, good.length - 1)));
            assertStatus(Status.FORMAT, "'<memory>'", () -> session.loadSequenceFromBytes(1, new byte[0]));
            assertStatus(Status.SHAPE, "a KV cache of fp32; this session has bf16",
                    () -> session.loadSequenceFromBytes(1, fp32State));
            for (int bad : new int[] {2, -1}) {
                String outside = "sequence " + bad + " is outside [0, 2)";
                assertStatus(Status.OUT_OF_RANGE, outside, () -> session.loadSequenceFromBytes(bad, good));
                assertStatus(Status.OUT_OF_RANGE, outside, () -> session.saveSequenceToBytes(bad));
            }
            NullPointerException none = assertThrows(NullPointerException.class,
                    () -> session.loadSequenceFromBytes(1, null));
            assertEquals("data", none.getMessage());
            for (int i = 0; i < 2; i++) {
                assertHolds(session, i, tokens[i], logits[i], "after the refused loads and saves");
            }

            session.loadSequenceFromBytes(1, good);
            assertHolds(session, 1, tokens[0], logits[0], "after loadSequenceFromBytes(1) of sequence 0's bytes");
            drawn(session, 2, 1);
        }
    }

    /**
     * A state longer than the largest Java array is refused with UNSUPPORTED, naming its size, rather than
     * failing in the JVM (no test session holds gigabytes, so the check is exercised on its own); the largest
     * that fits passes, as does a size_t above 2^63 not.
     */
    @Test
    void aStateLongerThanAJavaArrayIsRefusedClearly() throws Exception {
        assertEquals(Session.MAX_STATE_BYTES, Session.stateLength(0, Session.MAX_STATE_BYTES));
        assertEquals(0, Session.stateLength(0, 0));
        long tooLong = Session.MAX_STATE_BYTES + 1L;
        assertStatus(Status.UNSUPPORTED, "sequence 1's state takes " + tooLong + " bytes, more than a Java array holds",
                () -> Session.stateLength(1, tooLong));
        assertStatus(Status.UNSUPPORTED, "state takes 18446744073709551615 bytes", () -> Session.stateLength(0, -1));
    }

    /**
     * options() reads back what each session was created with, maxContext 0 resolved to min(model maximum,
     * 4096) (the golden fixture's max_position_embeddings is 512, as maxContext() says), and a session opened
     * with what it read back reads back the same.  The CUDA backend's settings, which the CPU backend ignores,
     * are read back as given too, and a prefillGemmTokens below -1 reaches the library, which refuses it.
     */
    @Test
    void optionsAreWhatTheSessionWasCreatedWith() throws Exception {
        Object[][] cases = {
            // reset.h's defaults, which new SessionOptions() must be.
            {new SessionOptions(), List.of(512, 1, KvCache.BF16, 0, false, 0, true)},
            {new SessionOptions().sequences(3).kvCache(KvCache.FP8).topLogprobs(5),
                List.of(512, 3, KvCache.FP8, 5, false, 0, true)},
            {new SessionOptions().maxContext(48).sequences(2).kvCache(KvCache.FP32).topLogprobs(20),
                List.of(48, 2, KvCache.FP32, 20, false, 0, true)},
            // None of them its default.
            {new SessionOptions().eager(true).prefillGemmTokens(64).programmaticLaunch(false),
                List.of(512, 1, KvCache.BF16, 0, true, 64, false)},
            {new SessionOptions().maxContext(16).prefillGemmTokens(-1), // -1: never the GEMM path
                List.of(16, 1, KvCache.BF16, 0, false, -1, true)},
        };
        try (Model model = goldenOneThread()) {
            for (Object[] c : cases) {
                Object want = c[1];
                try (Session session = model.newSession((SessionOptions) c[0])) {
                    SessionOptions got = session.options();
                    assertEquals(want, fields(got), FIELDS + " read back");
                    assertEquals(session.maxContext(), got.maxContext());
                    try (Session again = model.newSession(got)) {
                        assertEquals(want, fields(again.options()),
                                FIELDS + " read back from a session opened with what options() gave");
                    }
                }
            }
            // Passed as it is: the library's refusal names the value.
            assertStatus(Status.INVALID_ARGUMENT, "prefill_gemm_tokens = -2",
                    () -> model.newSession(new SessionOptions().prefillGemmTokens(-2)).close());
        }
    }

    private static final String FIELDS =
            "maxContext, sequences, kvCache, topLogprobs, eager, prefillGemmTokens, programmaticLaunch";

    /** The values of FIELDS, to compare as one. */
    private static List<Object> fields(SessionOptions o) {
        return List.of(o.maxContext(), o.sequences(), o.kvCache(), o.topLogprobs(), o.eager(),
                o.prefillGemmTokens(), o.programmaticLaunch());
    }

    // ---------------------------------------------------------------- KV cache types

    /**
     * A one-sequence greedy session on model with a KV cache of kvCache, prefilled with prompt; an
     * end-of-generation id does not end it, so every decode step draws a token.
     */
    private static Session cacheSession(Model model, KvCache kvCache, int[] prompt) throws ResetException {
        Session session = model.newSession(new SessionOptions().maxContext(64).kvCache(kvCache));
        try {
            session.setPolicy(PolicyParams.greedy());
            session.setStop(new StopOptions().ignoreEos(true));
            session.prefill(prompt);
            return session;
        } catch (ResetException | RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** The largest difference between two sequences' logits. */
    private static double farthest(float[] a, float[] b) {
        double d = 0;
        for (int i = 0; i < a.length; i++) d = Math.max(d, Math.abs((double) a[i] - b[i]));
        return d;
    }

    /**
     * Checks the logits session holds after its prefill against the same prefill with the two other cache
     * types: both backends round each key and value to the cache's type as it is written, so the prefill's
     * last token attends to rounded values and its logits show the rounding.  The FP32 cache is the unrounded
     * reference; FP8 (3 mantissa bits) lands farther from it than BF16 (7), and neither on it.  A session that
     * ended up with another cache than kvCache (the option lost on its way to C) fails here.
     */
    private static void assertRoundedAs(Model model, Session session, KvCache kvCache, int[] prompt)
            throws ResetException {
        Map<KvCache, float[]> logits = new EnumMap<>(KvCache.class);
        for (KvCache other : new KvCache[] {KvCache.BF16, KvCache.FP8, KvCache.FP32}) {
            if (other == kvCache) continue;
            try (Session o = cacheSession(model, other, prompt)) {
                logits.put(other, o.logits(0));
            }
        }
        logits.put(kvCache, session.logits(0));
        double bf16 = farthest(logits.get(KvCache.BF16), logits.get(KvCache.FP32));
        double fp8 = farthest(logits.get(KvCache.FP8), logits.get(KvCache.FP32));
        assertTrue(0 < bf16 && bf16 < fp8, "the prefill's logits are at most " + bf16 + " from the FP32 cache's "
                + "with BF16 and " + fp8 + " with FP8: want 0 < BF16's < FP8's");
    }

    /** Runs n greedy steps: each draws a token of the vocabulary, and the sequence holds the prompt, then them. */
    private static void assertDecodes(Session session, int[] prompt, int n) throws ResetException {
        int[] got = drawn(session, 1, n)[0];
        int vocab = session.model().info().vocabSize();
        assertTrue(Arrays.stream(got).allMatch(token -> token < vocab),
                "drew " + Arrays.toString(got) + ", outside the vocabulary of " + vocab);
        assertArrayEquals(joined(prompt, got), session.tokens(0), "the prompt, then the draws");
    }

    /**
     * Checks that sequence 0 of session, saved, names its cache type, name, as the library writes it: a
     * session of the default BF16 cache refuses the file with SHAPE, naming both types, and another session
     * with a cache of kvCache loads it and holds session's tokens and logits bit for bit.
     */
    private static void assertSavedAs(Model model, Session session, KvCache kvCache, String name, Path dir)
            throws ResetException {
        String path = dir.resolve(name + ".safetensors").toString();
        session.saveSequence(0, path);
        try (Session bf16 = model.newSession();
                Session same = model.newSession(new SessionOptions().maxContext(64).kvCache(kvCache))) {
            assertStatus(Status.SHAPE, "a KV cache of " + name + "; this session has bf16",
                    () -> bf16.loadSequence(0, path));
            same.loadSequence(0, path);
            assertHolds(same, 0, session.tokens(0), session.logits(0),
                    "after loading the " + name + " file into another " + name + " session");
        }
    }

    /**
     * An FP8 KV cache session (half the bytes of BF16 for long contexts) prefills and decodes greedily on the
     * golden fixture, its logits rounded as an FP8 cache rounds them, and its saved sequence names an FP8 cache.
     */
    @Test
    void anFp8KvCacheSessionPrefillsAndDecodes(@TempDir Path dir) throws Exception {
        int[] prompt = ids("prompt.txt");
        try (Model model = goldenOneThread(); Session session = cacheSession(model, KvCache.FP8, prompt)) {
            assertRoundedAs(model, session, KvCache.FP8, prompt);
            assertDecodes(session, prompt, 8);
            assertSavedAs(model, session, KvCache.FP8, "fp8", dir);
        }
    }

    /**
     * An FP32 KV cache session, the CPU backend's unrounded reference, prefills and decodes on the CPU backend,
     * its logits unrounded, and its saved sequence names an FP32 cache.  (The CUDA backend refuses it with
     * UNSUPPORTED; this build has no CUDA model to show it on.)
     */
    @Test
    void anFp32KvCacheSessionWorksOnTheCpuBackend(@TempDir Path dir) throws Exception {
        int[] prompt = ids("prompt.txt");
        try (Model model = goldenOneThread(); Session session = cacheSession(model, KvCache.FP32, prompt)) {
            assertEquals(Backend.CPU, model.info().backend());
            assertRoundedAs(model, session, KvCache.FP32, prompt);
            assertDecodes(session, prompt, 8);
            assertSavedAs(model, session, KvCache.FP32, "fp32", dir);
        }
    }

    /** The only value of KvCache that names no cache type, null, is refused where it is set, naming the option. */
    @Test
    void aNullKvCacheIsRefused() {
        SessionOptions options = new SessionOptions();
        NullPointerException e = assertThrows(NullPointerException.class, () -> options.kvCache(null));
        assertEquals("kvCache", e.getMessage());
    }

    // ------------------------------------------------------------------ a standalone policy's logit bias (0.7)

    /** A standalone policy's logits: the most likely tokens are 4, 1 and 6, the least likely 7. */
    private static final float[] POLICY_LOGITS = {0.5f, 2, 1, -1, 3, 0, 1.5f, -2};

    /** Draws a token from logits with policy, checks that the decision's logprob is still raw, and accepts it. */
    private static int sampleAndAccept(Policy policy, float[] logits) throws ResetException {
        Policy.Sample sample = policy.sample(logits);
        assertEquals(rawLogprob(logits, sample.token()), sample.decision().logprob(), LOGPROB_TOLERANCE,
                sample.toString());
        policy.accept(sample.token());
        return sample.token();
    }

    /**
     * Greedy draws the argmax of the logits plus the policy's bias: a ban of the argmax gives the second, +1
     * more on the third raises it past the second.  A bad bias is refused and leaves the one in force; that
     * one stays through setParams and reset, and clearing it (or setting none) gives back the raw argmax.
     */
    @Test
    void aPolicysLogitBiasBansRaisesAndClears() throws Exception {
        try (Policy policy = Policy.create(PolicyParams.greedy(), null, null, 0)) {
            float ban = Float.NEGATIVE_INFINITY;
            assertEquals(4, sampleAndAccept(policy, POLICY_LOGITS), "without a bias");
            policy.setLogitBias(new int[] {4}, new float[] {ban});
            assertEquals(1, sampleAndAccept(policy, POLICY_LOGITS), "with the argmax banned");
            policy.setLogitBias(new int[] {4, 6}, new float[] {ban, 1.0f});
            assertEquals(6, sampleAndAccept(policy, POLICY_LOGITS), "with the argmax banned and +1 on the third");
            assertStatus(Status.INVALID_ARGUMENT, "entries[0].bias",
                    () -> policy.setLogitBias(new int[] {1}, new float[] {Float.NaN}));
            assertStatus(Status.INVALID_ARGUMENT, "token 2 is listed twice",
                    () -> policy.setLogitBias(new int[] {2, 2}, new float[] {1.0f, -1.0f}));
            assertStatus(Status.OUT_OF_RANGE, "entries[1].token = -1 is outside",
                    () -> policy.setLogitBias(new int[] {3, -1}, new float[] {1.0f, 1.0f}));
            IllegalArgumentException lengths = assertThrows(IllegalArgumentException.class,
                    () -> policy.setLogitBias(new int[] {1, 2}, new float[] {1.0f}));
            assertEquals("2 tokens but 1 biases", lengths.getMessage());
            assertEquals(6, sampleAndAccept(policy, POLICY_LOGITS), "after the refusals");
            policy.setParams(PolicyParams.greedy());
            assertEquals(6, sampleAndAccept(policy, POLICY_LOGITS), "after setParams");
            policy.reset();
            assertEquals(6, sampleAndAccept(policy, POLICY_LOGITS), "after reset");
            policy.clearLogitBias();
            assertEquals(4, sampleAndAccept(policy, POLICY_LOGITS), "after clearLogitBias");
            policy.setLogitBias(new int[] {4}, new float[] {ban});
            policy.setLogitBias(new int[0], new float[0]);
            assertEquals(4, sampleAndAccept(policy, POLICY_LOGITS), "after empty arrays");
        }
    }

    /** Twenty draws at T = 1.0 from POLICY_LOGITS by a new policy with the given bias. */
    private static int[] sampledByPolicy(int[] tokens, float[] biases) throws ResetException {
        try (Policy policy = Policy.create(sampledPolicy(), null, null, 0)) {
            policy.setLogitBias(tokens, biases);
            int[] out = new int[20];
            for (int i = 0; i < out.length; i++) out[i] = sampleAndAccept(policy, POLICY_LOGITS);
            return out;
        }
    }

    /** At T = 1.0, +100 on the least likely token draws it every time, where the same policy without it does not. */
    @Test
    void aPlusHundredPolicyBiasIsAlwaysDrawn() throws Exception {
        int[] plain = sampledByPolicy(new int[0], new float[0]);
        assertFalse(Arrays.stream(plain).anyMatch(token -> token == 7), "without a bias the policy drew "
                + Arrays.toString(plain) + ": +100 on 7 below could not be told apart");
        int[] forced = sampledByPolicy(new int[] {7}, new float[] {100.0f});
        for (int token : forced) assertEquals(7, token, "with +100 on 7: " + Arrays.toString(forced));
    }

    /**
     * A policy made without a model knows no vocabulary: sample refuses logits that do not reach a listed
     * token, and logits whose every unbanned entry is -infinity.  One made for a model refuses a token
     * outside its vocabulary when the bias is set.
     */
    @Test
    void aPlainPolicyRefusesLogitsShorterThanItsBiasAndAModelsRefusesTheBias() throws Exception {
        try (Policy policy = Policy.create(PolicyParams.greedy(), null, null, 0)) {
            policy.setLogitBias(new int[] {7}, new float[] {100.0f});
            assertStatus(Status.OUT_OF_RANGE, "lists token 7, outside these 7 logits",
                    () -> policy.sample(Arrays.copyOf(POLICY_LOGITS, 7)));
            assertEquals(7, sampleAndAccept(policy, POLICY_LOGITS), "with +100 on 7");
            float[] bans = new float[7];
            Arrays.fill(bans, Float.NEGATIVE_INFINITY);
            policy.setLogitBias(IntStream.range(0, 7).toArray(), bans);
            assertEquals(7, sampleAndAccept(policy, POLICY_LOGITS), "with every token but 7 banned");
            float[] last = POLICY_LOGITS.clone();
            last[7] = Float.NEGATIVE_INFINITY;
            assertStatus(Status.INVALID_ARGUMENT, "every token the logit bias does not ban has a logit of -inf",
                    () -> policy.sample(last));
        }
        try (Model model = chatOneThread(); Policy policy = Policy.forModel(model, PolicyParams.greedy())) {
            assertStatus(Status.OUT_OF_RANGE, "entries[0].token = 512 is outside the vocabulary",
                    () -> policy.setLogitBias(new int[] {512}, new float[] {1.0f}));
            policy.setLogitBias(new int[] {511}, new float[] {100.0f});
            float[] logits = new float[512];
            assertEquals(511, sampleAndAccept(policy, logits), "with +100 on 511");
        }
    }

    private static int[] greedyTokens(Model model, float frequencyPenalty) throws Exception {
        try (Session session = model.newSession(128, 1)) {
            session.setPolicy(PolicyParams.greedy().frequencyPenalty(frequencyPenalty));
            session.prefill(ids("prompt.txt"));
            List<Integer> got = new ArrayList<>();
            for (Step step : session.generate(20)) got.add(step.token());
            return got.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private static int mostRepeats(int[] tokens) {
        int[] sorted = tokens.clone();
        Arrays.sort(sorted);
        int most = 0;
        for (int i = 0, run = 0; i < sorted.length; i++) {
            run = i > 0 && sorted[i] == sorted[i - 1] ? run + 1 : 1;
            most = Math.max(most, run);
        }
        return most;
    }

    /** The fixture's plain greedy continuation repeats a token in its first 20; a frequency penalty of 2 does not. */
    @Test
    void aFrequencyPenaltyStopsGreedyRepeating() throws Exception {
        try (Model model = goldenOneThread()) {
            int[] plain = greedyTokens(model, 0f);
            int[] penalised = greedyTokens(model, 2f);
            String both = Arrays.toString(plain) + " vs " + Arrays.toString(penalised);
            assertEquals(plain.length, penalised.length, both);
            assertFalse(Arrays.equals(plain, penalised), both);
            assertTrue(mostRepeats(penalised) < mostRepeats(plain), both);
        }
    }

    @Test
    void cancelFromAnotherThreadStopsDecoding() throws Exception {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try (Model model = goldenOneThread(); Session session = model.newSession(512, 1)) {
            session.setPolicy(PolicyParams.greedy());
            int[] prompt = new int[8];
            Arrays.fill(prompt, 3);
            session.prefill(prompt);
            // reset drops a request no call has consumed, so the refill below must
            // not run between the cancel and the call that takes it: both hold the
            // lock, and the loop refills only while no cancel was sent.
            Object lock = new Object();
            boolean[] cancelSent = {false};
            timer.schedule(() -> {
                synchronized (lock) {
                    session.cancel();
                    cancelSent[0] = true;
                }
            }, 50, TimeUnit.MILLISECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            ResetException cancelled = null;
            int lengthBefore = -1;
            while (cancelled == null && System.nanoTime() < deadline) { // busy until the cancel lands
                try {
                    // The cancel may land in any call: the refilling prefill as well as a step.
                    if (session.length(0) > 500) {
                        boolean refill;
                        synchronized (lock) {
                            refill = !cancelSent[0];
                            if (refill) session.reset();
                        }
                        if (refill) {
                            lengthBefore = 0;
                            session.prefill(prompt);
                        }
                    }
                    lengthBefore = session.length(0);
                    session.step();
                } catch (ResetException e) {
                    cancelled = e;
                }
            }
            assertNotNull(cancelled, "no cancel within 30 s");
            assertEquals(Status.CANCELLED, cancelled.getStatus());
            assertEquals("RESET_ERR_CANCELLED", cancelled.getStatusName());
            assertEquals(lengthBefore, session.length(0), "a cancelled call leaves the session as it was");
            if (session.length(0) == 0) session.prefill(prompt); // the cancel hit the refill after a reset
            assertEquals(1, session.step().size(), "the cancel is spent: the session decodes again");
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void aStreamEndsWithTheFailureOfItsStep() throws Exception {
        try (Model model = goldenOneThread(); Session session = model.newSession(8, 1)) {
            session.setPolicy(PolicyParams.greedy());
            session.prefill(new int[] {3, 3, 3, 3, 3, 3});
            List<String> texts = new ArrayList<>();
            UncheckedResetException e = assertThrows(UncheckedResetException.class, () -> {
                for (String text : session.stream(100)) texts.add(text);
            });
            assertEquals(Status.CONTEXT_OVERFLOW, e.getCause().getStatus());
            assertFalse(texts.isEmpty());
        }
    }

    @Test
    void tokenizeAndChatFormatCrossAsUtf8() throws Exception {
        try (Model model = Model.load(CHAT); Tokenizer tokenizer = Tokenizer.load(CHAT)) {
            // Supplementary characters and U+0000 are where JNI's modified UTF-8 differs from UTF-8.
            String text = "naïve 🦀 maths: 2+2=4\n\nthen \u0000 done<|im_end|>";
            int[] ids = tokenizer.encode(text);
            assertEquals(text, tokenizer.decode(ids));
            assertArrayEquals(ids, model.tokenizer().encode(text));
            assertEquals(3, tokenizer.tokenId("<|im_end|>"));
            assertEquals(3, ids[ids.length - 1]);
            assertEquals(-1, tokenizer.tokenId("no such token"));
            assertEquals(text.replace("<|im_end|>", ""), tokenizer.decode(ids, true));
            assertArrayEquals("<|im_end|>".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    tokenizer.tokenBytes(3, false));
            assertEquals(0, tokenizer.tokenBytes(3, true).length);

            String prompt = tokenizer.chatFormat(List.of(ChatMessage.user("2+2? 🦀")), new ChatOptions());
            assertEquals("<|im_start|>user\n2+2? 🦀<|im_end|>\n<|im_start|>assistant\n", prompt);
            String noThinking = tokenizer.chatFormat(List.of(ChatMessage.user("2+2?")),
                    new ChatOptions().enableThinking(false));
            assertTrue(noThinking.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), noThinking);
            // Chat text is tokenized with special tokens parsed, so <|im_start|> is one id.
            assertEquals(2, tokenizer.encode(prompt)[0]);

            TokenizerInfo info = tokenizer.info();
            assertEquals("sentencepiece", info.kind());
            assertEquals(ChatTemplate.QWEN3, info.chatTemplate());
            assertEquals(512, info.vocabSize());
            assertTrue(Arrays.stream(info.eosIds()).anyMatch(id -> id == 3), Arrays.toString(info.eosIds()));
            assertTrue(tokenizer.stepDelimiters(false).length > 0);
            assertTrue(tokenizer.stepDelimiters(true).length > 0);

            ResetException surrogate = assertThrows(ResetException.class, () -> tokenizer.encode("bad \uD800 half"));
            assertEquals(Status.BAD_UTF8, surrogate.getStatus());
            ResetException outOfRange = assertThrows(ResetException.class, () -> tokenizer.decode(new int[] {512}));
            assertEquals(Status.OUT_OF_RANGE, outOfRange.getStatus());
        }
    }

    @Test
    void longTextGrowsTheBuffers() throws Exception {
        try (Tokenizer tokenizer = Tokenizer.load(CHAT)) {
            String text = "Then 2 + 2 = 4.\n\n".repeat(400); // > the first 256-byte buffer
            assertEquals(text, tokenizer.decode(tokenizer.encode(text)));
            String prompt = tokenizer.chatFormat(List.of(ChatMessage.system("be brief"), ChatMessage.user(text)),
                    new ChatOptions().addGenerationPrompt(false));
            assertTrue(prompt.contains(text) && prompt.startsWith("<|im_start|>system\nbe brief"), prompt);
        }
    }

    @Test
    void parallelSequencesStepTogether() throws Exception {
        try (Model model = Model.load(CHAT); Session session = model.newSession(64, 3)) {
            session.setPolicy(PolicyParams.fixed(1.0f).seed(5));
            session.prefill(model.tokenizer().encode("Hello"));
            List<Step> steps = session.step();
            assertEquals(3, steps.size());
            for (int i = 0; i < 3; i++) assertEquals(i, steps.get(i).sequence());
            assertEquals(model.info().vocabSize(), session.logits(2).length);
        }
    }

    @Test
    void closedObjectsRefuseUseAndCloseTwice() throws Exception {
        Model model = Model.load(CHAT);
        Tokenizer owned = model.tokenizer();
        Session session = model.newSession(32, 1);
        model.close(); // the session keeps the model alive in libreset
        session.prefill(new int[] {5, 6});
        assertEquals(1, session.step().size());
        session.close();
        session.close();
        session.cancel(); // does nothing on a closed session
        assertThrows(IllegalStateException.class, () -> session.prefill(new int[] {1}));
        assertThrows(IllegalStateException.class, () -> session.truncate(0));
        assertThrows(IllegalStateException.class, () -> session.truncateSequence(0, 0));
        assertThrows(IllegalStateException.class, () -> session.tokens(0));
        assertThrows(IllegalStateException.class, () -> session.setLogitBias(new int[] {1}, new float[] {1.0f}));
        assertThrows(IllegalStateException.class, session::clearLogitBias);
        assertThrows(IllegalStateException.class, () -> session.copySequence(0, 0));
        assertThrows(IllegalStateException.class, () -> session.saveSequence(0, "/nonexistent/sequence"));
        assertThrows(IllegalStateException.class, () -> session.loadSequence(0, "/nonexistent/sequence"));
        assertThrows(IllegalStateException.class, () -> session.saveSequenceToBytes(0));
        assertThrows(IllegalStateException.class, () -> session.loadSequenceFromBytes(0, new byte[16]));
        assertThrows(IllegalStateException.class, session::options);
        assertThrows(IllegalStateException.class, () -> owned.encode("x"));
        assertThrows(IllegalStateException.class, model::tokenizer);
        model.close();
        Policy policy = Policy.create(PolicyParams.greedy(), null, null, 0);
        policy.close();
        policy.close();
        assertThrows(IllegalStateException.class, () -> policy.setLogitBias(new int[] {4}, new float[] {1.0f}));
        assertThrows(IllegalStateException.class, policy::clearLogitBias);
        try (Model golden = golden()) {
            assertNull(golden.tokenizer(), "the golden fixtures have no tokenizer");
            assertEquals("qwen3", golden.info().architecture());
            assertEquals(Backend.CPU, golden.info().backend());
        }
    }

    @Test
    void aNulInACStringIsRefusedNotTruncated() throws Exception {
        // libreset reads paths, roles and presets up to their NUL: CHAT + "\0..." would load CHAT.
        String elsewhere = CHAT + "\0/elsewhere";
        IllegalArgumentException path = assertThrows(IllegalArgumentException.class, () -> Model.load(elsewhere));
        assertTrue(path.getMessage().startsWith("path holds a NUL"), path.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Tokenizer.load(elsewhere));
        IllegalArgumentException preset = assertThrows(IllegalArgumentException.class,
                () -> Policy.create(PolicyParams.reset(1.0f, -1, -1, 32).preset("Qwen3-8B\0junk"), null, null, 0));
        assertTrue(preset.getMessage().startsWith("preset holds a NUL"), preset.getMessage());
        try (Tokenizer tokenizer = Tokenizer.load(CHAT)) {
            IllegalArgumentException role = assertThrows(IllegalArgumentException.class,
                    () -> tokenizer.chatFormat(List.of(new ChatMessage("user\0system", "hi")), new ChatOptions()));
            assertTrue(role.getMessage().startsWith("a chat message's role holds a NUL"), role.getMessage());
            // Content crosses with its length: U+0000 in it is text like any other.
            assertEquals("<|im_start|>user\na\0b<|im_end|>\n<|im_start|>assistant\n",
                    tokenizer.chatFormat(List.of(ChatMessage.user("a\0b")), new ChatOptions()));
        }
    }

    /**
     * A sequence file's path, like a model's, is read up to its NUL: dir + "/sequence\0/elsewhere" would be
     * dir + "/sequence".
     */
    @Test
    void aNulInASequenceFilesPathIsRefused(@TempDir Path dir) throws Exception {
        String file = dir.resolve("sequence").toString();
        String elsewhere = file + "\0/elsewhere";
        try (Model model = chatOneThread(); Session session = model.newSession(32, 1)) {
            session.prefill(new int[] {5, 6, 7});
            IllegalArgumentException save = assertThrows(IllegalArgumentException.class,
                    () -> session.saveSequence(0, elsewhere));
            assertTrue(save.getMessage().startsWith("path holds a NUL"), save.getMessage());
            assertFalse(Files.exists(Paths.get(file)), "saveSequence with a NUL in the path wrote " + file);
            session.saveSequence(0, file);
            IllegalArgumentException load = assertThrows(IllegalArgumentException.class,
                    () -> session.loadSequence(0, elsewhere));
            assertTrue(load.getMessage().startsWith("path holds a NUL"), load.getMessage());
        }
    }

    // One call each on an object nobody else holds: the call is the object's last use.
    private static float decideOnce(float[] logits) throws ResetException {
        return Policy.create(PolicyParams.fixed(1.0f), null, null, 0).decide(logits).entropy();
    }

    private static Status prefillOnce(Model model, int[] ids) {
        try {
            model.newSession(16, 1).prefill(ids);
            return Status.OK;
        } catch (ResetException e) {
            return e.getStatus();
        }
    }

    private static String decodeOnce(int[] ids) throws ResetException {
        return Tokenizer.load(CHAT).decode(ids);
    }

    private static String modelDecodeOnce(int[] ids) throws ResetException {
        return Model.load(CHAT, new ModelOptions().backend(Backend.CPU).threads(1)).tokenizer().decode(ids);
    }

    private static void forTwoSeconds(Executable call) throws Throwable {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) call.execute();
    }

    /**
     * An object's Cleaner frees its handle once the object is unreachable, which can happen inside
     * its last call, as soon as the method has read the handle.  Without reachability fences this
     * failed in 6 of 6 runs (heap corruption from Policy.decide, or RESET_ERR_INVALID_HANDLE).
     */
    @Test
    void objectsNobodyHoldsOutliveTheirCallsWhileTheGcRuns() throws Throwable {
        // Large arrays: copying them in the JNI glue and reading them in C widen the window.
        float[] logits = new float[1 << 18];
        for (int i = 0; i < logits.length; i++) logits[i] = i % 13;
        int[] tooLong = new int[1 << 20]; // CONTEXT_OVERFLOW, after the copy
        int[] ids = new int[1 << 16];
        for (int i = 0; i < ids.length; i++) ids[i] = 4 + i % 500;
        // Garbage from another thread: a young collection every few ms finds the objects just
        // dropped (System.gc()'s full collections, with JUnit's heap, were too slow to catch many).
        Thread gc = new Thread(() -> {
            byte[][] garbage = new byte[8][];
            while (true) {
                for (int i = 0; i < 256; i++) garbage[i & 7] = new byte[1 << 16];
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        gc.setDaemon(true);
        gc.start();
        try (Model model = Model.load(CHAT, new ModelOptions().backend(Backend.CPU).threads(1))) {
            float entropy = decideOnce(logits);
            String text = decodeOnce(ids);
            forTwoSeconds(() -> assertEquals(entropy, decideOnce(logits), "Policy.decide"));
            forTwoSeconds(() -> assertEquals(Status.CONTEXT_OVERFLOW, prefillOnce(model, tooLong), "Session.prefill"));
            forTwoSeconds(() -> assertEquals(text, decodeOnce(ids), "Tokenizer.decode"));
            forTwoSeconds(() -> assertEquals(text, modelDecodeOnce(ids), "a model's Tokenizer.decode"));
        } finally {
            gc.interrupt();
            gc.join();
        }
    }

    private static long rssKiB() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.split("\\s+")[1]);
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    private static final String[] LONG_STOPS = IntStream.range(0, 16)
            .mapToObj(i -> String.valueOf((char) ('a' + i)).repeat(4096)).toArray(String[]::new);

    private static final int[] MANY_BIAS_TOKENS = IntStream.range(0, 1 << 16).map(i -> i % 512).toArray();
    private static final float[] MANY_BIASES = new float[1 << 16];

    // 64 KiB of tools and of tool calls, each a JSON string (rendered or refused, they cross all the same).
    private static final String LONG_TOOLS = "[\"" + "t".repeat(1 << 16) + "\"]";
    private static final List<ChatMessage> LONG_TOOL_CALLS = List.of(ChatMessage.user("hi"),
            ChatMessage.assistant("", "[{\"name\": \"f\", \"arguments\": \"" + "a".repeat(1 << 16) + "\"}]"));

    @Test
    void toolCallsOfManyMessagesAreBoundedByTheirCount() throws ResetException {
        // The options' array of per-message tool calls keeps its count (the glue's set_tool_calls checks each
        // index against it): every index below the count is set and set again, the count itself is refused.
        reset_chat_options raw = new reset_chat_options();
        try {
            int n = 5000;
            byte[] calls = Text.utf8("[]");
            for (int i = n - 1; i >= 0; i--) assertEquals(0, raw.set_tool_calls(n, i, calls), "message " + i);
            assertEquals(0, raw.set_tool_calls(n, 0, Text.utf8("[{}]")));
            assertEquals(0, raw.set_tool_calls(n, n - 1, null));
            assertEquals(-1, raw.set_tool_calls(n, n, calls));
            assertEquals(-1, raw.set_tool_calls(n + 7, n + 3, calls));  // the first call's count holds
        } finally {
            raw.delete();
        }
    }

    @Test
    void aThousandCreateFreeCyclesKeepMemoryFlat() throws Exception {
        try (Model model = goldenOneThread(); Tokenizer chat = Tokenizer.load(CHAT)) {
            for (int i = 0; i < 1000; i++) cycle(model, chat, i); // warm the allocators and the JIT first
            long before = rssKiB();
            for (int i = 0; i < 1000; i++) cycle(model, chat, i);
            long grown = rssKiB() - before;
            // A leaked session holds ~52 KiB (a 2-layer KV cache of 64 positions, logits, scratch): 1,000
            // of them grow RSS by ~52 MiB.  The JVM itself moved RSS by up to 8 MiB between runs on a
            // loaded CI machine (code cache, malloc arenas of its threads), so the bound sits between.
            // The Java heap is fixed and pre-touched by java.sh, so it does not count here; small leaks
            // are the C test's job (the same cycles under valgrind).
            assertTrue(grown < 24 * 1024, "RSS grew by " + grown + " KiB over 1,000 cycles");
        }
    }

    private static void cycle(Model model, Tokenizer chat, int i) throws ResetException {
        // Tools and tool calls (0.11) cross twice too (the glue's copy, the options' own): 1,000 cycles would
        // grow RSS by 64 MiB for either if it leaked.  A tools list of strings is refused, the calls render.
        assertThrows(ResetException.class, () -> chat.chatFormat(List.of(ChatMessage.user("hi")),
                new ChatOptions().tools(LONG_TOOLS)));
        assertTrue(chat.chatFormat(LONG_TOOL_CALLS, new ChatOptions()).length() > 1 << 16);
        try (Session session = model.newSession(64, 1)) {
            session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32).preset("Qwen3-8B"));
            // Stop strings cross twice (the glue's copy, the options' own), refused or not: 16 of 4 KiB, longer
            // than the library takes, would grow RSS by 64 MiB over 1,000 cycles if either copy leaked.
            assertThrows(ResetException.class, () -> session.setStop(new StopOptions().strings(LONG_STOPS).ids(1, 2)));
            // A logit bias crosses twice too (the glue's copies of the arrays, the C array of entries), refused
            // or not: 65,536 entries, more than the library takes, would grow RSS by 512 MiB (the C array alone)
            // over 1,000 cycles if either leaked.
            ResetException many = assertThrows(ResetException.class,
                    () -> session.setLogitBias(MANY_BIAS_TOKENS, MANY_BIASES));
            assertEquals(Status.INVALID_ARGUMENT, many.getStatus(), many.getMessage());
            // A prefill costs milliseconds on a loaded CPU: every tenth cycle keeps the test short.
            if (i % 10 == 0) session.prefill(new int[] {1, 2, 3});
        }
        try (Policy policy = Policy.create(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32), new int[] {5}, new int[] {6}, 0)) {
            policy.decide(new float[] {1, 2, 3});
            // A policy's logit bias (0.7) crosses as a session's does.
            ResetException many = assertThrows(ResetException.class,
                    () -> policy.setLogitBias(MANY_BIAS_TOKENS, MANY_BIASES));
            assertEquals(Status.INVALID_ARGUMENT, many.getStatus(), many.getMessage());
        }
        assertThrows(ResetException.class, () -> Model.load("/nonexistent/model"));
    }
}
