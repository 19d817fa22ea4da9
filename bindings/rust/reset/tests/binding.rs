//! The Rust part of the cross-language binding tests (tests/bindings/rust.sh runs them).
//! RESET_SOURCE_DIR: the source tree; RESET_BINDING_IDS: where the C test wrote prompt.txt and expected.txt.
use reset::{
    Backend, CheckpointFormat, EndReason, Error, FileAccess, KvCache, Message, Model, ModelOptions, PolicyKind,
    PolicyParams, Session, SessionOptions, Step, StopOptions, Tokenize, Tokenizer, Weights,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn source() -> PathBuf {
    PathBuf::from(std::env::var("RESET_SOURCE_DIR").unwrap_or_else(|_| "../../..".into()))
}

fn model() -> Model {
    let options = ModelOptions { weights: Weights::Bf16, backend: Backend::Cpu, ..ModelOptions::default() };
    Model::load(source().join("tests/fixtures/models/qwen3-tied"), &options).expect("fixture model")
}

fn ids(name: &str) -> Vec<i32> {
    let dir = std::env::var("RESET_BINDING_IDS").expect("RESET_BINDING_IDS: run through ctest");
    let text = std::fs::read_to_string(PathBuf::from(dir).join(name)).unwrap();
    text.split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn greedy_continuation_is_the_one_c_decodes() {
    let (prompt, expected) = (ids("prompt.txt"), ids("expected.txt"));
    let model = model();
    let mut session = model.session(128, 1).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap(); // generation_config.json asks for sampling
    session.prefill(&prompt).unwrap();
    let got: Vec<i32> = session.generate(expected.len()).map(|s| s.unwrap().token).collect();
    assert_eq!(got, expected);
}

/// The logits after the prompt, then 8 greedy tokens, of the fixture model loaded with `file_access`.
fn decode_loaded_with(file_access: FileAccess) -> (Vec<f32>, Vec<i32>) {
    let options =
        ModelOptions { weights: Weights::Bf16, backend: Backend::Cpu, file_access, ..ModelOptions::default() };
    let model = Model::load(source().join("tests/fixtures/models/qwen3-tied"), &options).unwrap();
    let mut session = model.session(64, 1).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&ids("prompt.txt")).unwrap();
    let logits = session.logits(0).unwrap();
    let tokens: Vec<i32> = session.generate(8).map(|s| s.unwrap().token).collect();
    assert_eq!(tokens.len(), 8, "{file_access:?}");
    (logits, tokens)
}

#[test]
fn a_model_read_into_memory_decodes_as_the_mapped_one() {
    // 0.12: Read copies the bytes Map reads in place, so the logits are equal bit for bit and greedy decoding
    // draws the same tokens.  (An out-of-range value cannot be built from the enum.)
    assert_eq!(ModelOptions::default().file_access, FileAccess::Map);
    let (mapped_logits, mapped_tokens) = decode_loaded_with(FileAccess::Map);
    let (read_logits, read_tokens) = decode_loaded_with(FileAccess::Read);
    assert!(read_logits == mapped_logits, "the logits differ");
    assert_eq!(read_tokens, mapped_tokens);
}

#[test]
fn reset_policy_signals_reach_each_step() {
    let model = model();
    let mut session = model.session(0, 1).unwrap();
    session.set_policy(&PolicyParams { seed: 3, ..PolicyParams::reset(1.0, 0.3, 0.6, 8) }).unwrap();
    session.prefill(&ids("prompt.txt")).unwrap();
    let steps: Vec<_> = session.generate(8).collect::<Result<_, _>>().unwrap();
    assert_eq!(steps.len(), 8);
    for s in &steps {
        assert!(s.entropy > 0.0 && s.threshold > 0.0);
        assert!(s.temperature == 1.0 || s.temperature == 0.3, "temperature {}", s.temperature);
    }
    assert_eq!(session.logits(0).unwrap().len(), model.info().unwrap().vocab_size as usize);
}

#[test]
fn prefill_sequence_continues_one_sequence_only() {
    let model = model();
    let mut session = model.session(64, 2).unwrap();
    assert_eq!(session.prefill_sequence(1, &[7]).unwrap_err().status, Error::STATE);
    session.prefill(&[3, 4, 5]).unwrap();
    let before = session.logits(0).unwrap();
    session.prefill_sequence(1, &[7, 8]).unwrap();
    assert_eq!((session.len(0), session.len(1)), (3, 5));
    assert_eq!(session.logits(0).unwrap(), before);
    assert_ne!(session.logits(1).unwrap(), before);
    assert_eq!(session.prefill_sequence(2, &[7]).unwrap_err().status, Error::OUT_OF_RANGE);
}

#[test]
fn max_context_is_what_the_session_holds() {
    let model = model();
    assert_eq!(model.session(64, 1).unwrap().max_context(), 64);
    // 0 resolves to min(model maximum, 4096): qwen3-tied's max_position_embeddings is 512.
    assert_eq!(model.session(0, 1).unwrap().max_context(), 512);
}

#[test]
fn policy_reads_back_the_models_sampling_and_each_change() {
    let model = model();
    let mut session = model.session(64, 1).unwrap();
    // qwen3-tied's generation_config.json: do_sample true, temperature 0.6, top_k 20, top_p 0.95.
    let initial = session.policy().unwrap();
    assert_eq!(initial.kind, PolicyKind::Fixed);
    assert_eq!((initial.temperature, initial.top_k, initial.top_p), (0.6f32, 20, 0.95f32));
    assert!(initial.preset.is_none() && !initial.reset_state);

    let changed = PolicyParams { top_p: 0.5, ..initial.clone() };
    session.set_policy(&changed).unwrap();
    // PolicyParams has no PartialEq: Debug shows every field, floats exactly.
    assert_eq!(format!("{:?}", session.policy().unwrap()), format!("{changed:?}"));

    let preset = PolicyParams { kind: PolicyKind::Reset, preset: Some("Qwen3-8B".into()), ..PolicyParams::default() };
    session.set_policy(&preset).unwrap();
    let resolved = session.policy().unwrap();
    assert_eq!(resolved.kind, PolicyKind::Reset);
    // The paper's table for Qwen3-8B, in place of the -1 ("the model's preset") that was set.
    assert_eq!((resolved.t_low, resolved.tau0), (0.1f32, 0.5505f32));
    assert!(resolved.preset.is_none());
    // Resolved values stand on their own: setting them back needs no preset and changes nothing.
    session.set_policy(&resolved).unwrap();
    assert_eq!(format!("{:?}", session.policy().unwrap()), format!("{resolved:?}"));
}

#[test]
fn standalone_policy_decides_on_logits() {
    let mut policy = reset::Policy::new(&PolicyParams::reset(1.0, 0.3, 0.6, 4), &[5], &[6], 0).unwrap();
    let logits = [0.0f32, 1.0, 2.0, 0.5, 0.0, -1.0, 0.0];
    let (token, decision) = policy.sample(&logits).unwrap();
    assert!(decision.entropy > 0.0 && (0..7).contains(&token));
    policy.accept(token).unwrap();
    let bad = PolicyParams { kind: reset::PolicyKind::Fixed, temperature: -1.0, ..PolicyParams::default() };
    let error = policy.set_params(&bad).unwrap_err();
    assert_eq!(error.status, Error::INVALID_ARGUMENT);
    assert!(error.message.contains("temperature"), "{error}");
}

#[test]
fn missing_model_is_status_io() {
    let error = Model::load("/nonexistent/model", &ModelOptions::default()).err().unwrap();
    assert_eq!(error.status, 3);
    assert_eq!(error.name, "RESET_ERR_IO");
}

/// 0.10: info() names where a model's NVFP4 weights come from, one fixture of each reset_checkpoint_format, loaded as
/// it loads by default.  The format is the checkpoint's, not the weights': qwen3-tied loaded as NVFP4 is still
/// unquantized.  kv_cache_scales: only ct-nvfp4a16-head-qwen3 carries calibrated FP8 K/V scales.
#[test]
fn info_names_the_checkpoint_format() {
    let cases = [
        ("qwen3-tied", Weights::Auto, CheckpointFormat::Unquantized, false),
        ("qwen3-tied", Weights::Nvfp4W4A16, CheckpointFormat::Unquantized, false),
        ("modelopt-qwen3", Weights::Auto, CheckpointFormat::ModelOpt, false),
        ("ct-nvfp4-qwen3", Weights::Auto, CheckpointFormat::CompressedTensors, false),
        ("ct-nvfp4a16-head-qwen3", Weights::Auto, CheckpointFormat::CompressedTensors, true),
    ];
    for (fixture, weights, format, kv_cache_scales) in cases {
        let options = ModelOptions { weights, backend: Backend::Cpu, threads: 1, ..ModelOptions::default() };
        let model = Model::load(source().join("tests/fixtures/models").join(fixture), &options).expect(fixture);
        let info = model.info().unwrap();
        assert_eq!(info.checkpoint_format, format, "{fixture} ({weights:?})");
        assert_eq!(info.kv_cache_scales, kv_cache_scales, "{fixture} ({weights:?})");
        assert_eq!(info.architecture, "qwen3", "{fixture}");
    }
}

#[test]
fn another_abi_major_is_refused_clearly() {
    assert!(reset::check_abi(reset::ABI_MAJOR * 10000 + reset::ABI_MINOR * 100 + 99).is_ok());
    let error = reset::check_abi(70102).unwrap_err();
    assert!(error.message.contains("has ABI major 7, but these bindings need 0"), "{error}");
}

#[test]
fn an_older_minor_is_refused_clearly() {
    assert_eq!((reset::ABI_MAJOR, reset::ABI_MINOR), (0, 12));
    for newer_or_same in [1200, 1201, 1299, 1300, 9900] {
        assert!(reset::check_abi(newer_or_same).is_ok(), "{newer_or_same}");
    }
    // 0.11's reset_model_load knows no file_access.
    let error = reset::check_abi(1100).unwrap_err();
    assert_eq!(error.status, Error::UNSUPPORTED);
    assert_eq!(
        error.message,
        "libreset 0.11.0 is older than these bindings need (0.12 or newer): it lacks functions or fields they use"
    );
    let error = reset::check_abi(1199).unwrap_err();
    assert!(error.message.starts_with("libreset 0.11.99 is older"), "{error}");
    for older in [1000, 900, 800, 700, 600, 500, 400, 300, 200, 100] {
        let error = reset::check_abi(older).unwrap_err();
        assert!(error.message.starts_with(&format!("libreset 0.{}.0 is older", older / 100)), "{error}");
    }
    let major = reset::check_abi(10100).unwrap_err(); // the major is judged first
    assert!(major.message.contains("has ABI major 1"), "{major}");
}

#[test]
fn penalties_round_trip_and_out_of_range_is_refused() {
    let defaults = PolicyParams::default();
    assert_eq!((defaults.presence_penalty, defaults.frequency_penalty), (0.0, 0.0));
    assert_eq!(defaults.repetition_penalty, 1.0);
    let model = model();
    let mut session = model.session(16, 1).unwrap();
    assert_eq!(session.policy().unwrap().repetition_penalty, 1.0); // generation_config.json sets none
    let set = PolicyParams {
        kind: PolicyKind::Fixed,
        temperature: 0.7,
        presence_penalty: 1.5,
        frequency_penalty: 0.5,
        repetition_penalty: 1.25,
        ..PolicyParams::default()
    };
    session.set_policy(&set).unwrap();
    let read = session.policy().unwrap();
    assert_eq!(read.kind, PolicyKind::Fixed);
    assert_eq!((read.presence_penalty, read.frequency_penalty), (1.5, 0.5)); // exact in f32
    assert_eq!(read.repetition_penalty, 1.25);
    session.set_policy(&read).unwrap();
    assert_eq!(format!("{:?}", session.policy().unwrap()), format!("{read:?}"));

    let refused = |error: Error, field: &str| {
        assert_eq!(error.status, Error::INVALID_ARGUMENT, "{error}");
        assert!(error.message.contains(field), "{error}");
    };
    let error = session.set_policy(&PolicyParams { presence_penalty: 2.5, ..read.clone() }).unwrap_err();
    refused(error, "presence_penalty");
    let error = session.set_policy(&PolicyParams { frequency_penalty: -2.5, ..read.clone() }).unwrap_err();
    refused(error, "frequency_penalty");
    for repetition_penalty in [0.05, 11.0, f32::NAN, 0.0] {
        let error = session.set_policy(&PolicyParams { repetition_penalty, ..read.clone() }).unwrap_err();
        refused(error, "repetition_penalty");
    }
    // A refused policy changes nothing.
    assert_eq!(format!("{:?}", session.policy().unwrap()), format!("{read:?}"));

    let standalone = PolicyParams::reset(1.0, 0.3, 0.6, 4);
    let bad = PolicyParams { frequency_penalty: 2.5, ..standalone.clone() };
    refused(reset::Policy::new(&bad, &[], &[], 0).err().unwrap(), "frequency_penalty");
    let bad = PolicyParams { repetition_penalty: 0.05, ..standalone.clone() };
    refused(reset::Policy::new(&bad, &[], &[], 0).err().unwrap(), "repetition_penalty");
    let mut policy = reset::Policy::new(&standalone, &[], &[], 0).unwrap();
    let bad = PolicyParams { repetition_penalty: 11.0, ..standalone.clone() };
    refused(policy.set_params(&bad).unwrap_err(), "repetition_penalty");
    refused(policy.set_params(&PolicyParams { presence_penalty: 2.5, ..standalone }).unwrap_err(), "presence_penalty");
}

/// Hugging Face's RepetitionPenaltyLogitsProcessor, written here: each token seen in the context, once, has
/// z > 0 divided by r and z <= 0 multiplied by r.
fn repetition_penalized(logits: &[f32], seen: &[i32], r: f32) -> Vec<f32> {
    let mut out = logits.to_vec();
    let mut done = vec![false; logits.len()];
    for &token in seen {
        let t = token as usize;
        if !std::mem::replace(&mut done[t], true) {
            out[t] = if logits[t] > 0.0 { logits[t] / r } else { logits[t] * r };
        }
    }
    out
}

/// A standalone policy given its prompt with add_context draws (greedy) the argmax of the logits with the
/// context's lowered by the repetition penalty; reset forgets the context.
#[test]
fn a_standalone_policy_lowers_the_context_it_was_given() {
    let r = 2.0;
    let logits = [0.0, 2.0, 1.5, -1.0]; // raw argmax 1, in the prompt; 2 / 2 = 1 < 1.5
    let negative = [-1.0, -0.2, -0.3, -3.0]; // raw argmax 1; -0.2 * 2 = -0.4 < -0.3 (multiplied, not divided)
    let params =
        PolicyParams { kind: PolicyKind::Greedy, repetition_penalty: r, ..PolicyParams::reset(1.0, 0.3, 0.6, 4) };
    let mut policy = reset::Policy::new(&params, &[], &[], 0).unwrap();
    let greedy = |policy: &mut reset::Policy, logits: &[f32]| policy.sample(logits).unwrap().0;
    assert_eq!((argmax(&logits), greedy(&mut policy, &logits)), (1, 1)); // no context yet
    let mut seen = vec![1, 3, 1];
    policy.add_context(&seen).unwrap();
    let expected = argmax(&repetition_penalized(&logits, &seen, r));
    assert_eq!(expected, 2);
    let (token, decision) = policy.sample(&logits).unwrap();
    assert_eq!(token, expected);
    assert_eq!(decision.entropy, policy.decide(&logits).unwrap().entropy); // decided on the raw logits
    // Accepted tokens join the context: with 2 lowered too, 1 leads again (once, though the prompt holds it twice).
    policy.accept(token).unwrap();
    seen.push(token);
    assert_eq!(argmax(&repetition_penalized(&logits, &seen, r)), 1);
    assert_eq!(greedy(&mut policy, &logits), 1);
    assert_eq!(policy.add_context(&[0, -1]).unwrap_err().status, Error::OUT_OF_RANGE);
    policy.add_context(&[]).unwrap();
    assert_eq!(greedy(&mut policy, &[3.0, 0.0, 0.0, 0.0, 2.0]), 0); // 0 was not recorded: 3 leads, not 3 / 2 < 2
    policy.reset().unwrap();
    assert_eq!(greedy(&mut policy, &logits), argmax(&logits)); // forgotten: the raw argmax
    assert_eq!(greedy(&mut policy, &negative), 1);
    policy.add_context(&[1]).unwrap();
    let expected = argmax(&repetition_penalized(&negative, &[1], r));
    assert_eq!((expected, greedy(&mut policy, &negative)), (2, 2));
}

/// The fixture's plain greedy continuation repeats a prompt token; a repetition penalty of 1.5 makes another
/// choice there, and the first token it changes is one only the prompt holds.
#[test]
fn a_repetition_penalty_changes_greedy_decoding() {
    let model = model();
    let prompt = ids("prompt.txt");
    let run = |repetition_penalty: f32| -> Vec<i32> {
        let mut session = model.session(128, 1).unwrap();
        session.set_policy(&PolicyParams { repetition_penalty, ..PolicyParams::greedy() }).unwrap();
        session.prefill(&prompt).unwrap();
        session.generate(16).map(|s| s.unwrap().token).collect()
    };
    let (plain, penalised) = (run(1.0), run(1.5));
    assert_eq!((plain.len(), penalised.len()), (16, 16), "{plain:?} vs {penalised:?}");
    assert_ne!(plain, penalised);
    let first = (0..16).find(|&i| plain[i] != penalised[i]).unwrap();
    assert!(prompt.contains(&plain[first]) && !plain[..first].contains(&plain[first]), "{plain:?} vs {penalised:?}");
}

/// log softmax(logits)[token] in f64, written independently of the library: the max-shifted sum of exp.
fn raw_logprob(logits: &[f32], token: i32) -> f64 {
    let shift = logits.iter().map(|&z| f64::from(z)).fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logits.iter().map(|&z| (f64::from(z) - shift).exp()).sum();
    f64::from(logits[token as usize]) - shift - sum.ln()
}

/// The library sums exp(z - max) in FP32 in its own order, rounds z - max to FP32 and returns an f32: each
/// costs ~1e-6 at this vocabulary (512) and these magnitudes (|logprob| ~ 4).  1e-4 leaves margin, while a
/// field left at 0 or read at the wrong offset is off by whole units.
const LOGPROB_TOLERANCE: f64 = 1e-4;

fn argmax(logits: &[f32]) -> i32 {
    (0..logits.len()).fold(0, |best, i| if logits[i] > logits[best] { i } else { best }) as i32
}

#[test]
fn a_steps_logprob_is_log_softmax_of_the_raw_logits_at_its_token() {
    let model = model();
    let mut session = model.session(64, 1).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&ids("prompt.txt")).unwrap();
    for _ in 0..3 {
        let logits = session.logits(0).unwrap();
        let step = session.step().unwrap().remove(0);
        let expected = raw_logprob(&logits, step.token);
        assert_eq!(step.token, argmax(&logits), "{step:?}");
        // The fixture's tokens are far from certain: a logprob of 0 cannot pass.
        assert!(expected < -1.0 && step.logprob <= 0.0, "{step:?}, expected {expected}");
        assert!((f64::from(step.logprob) - expected).abs() <= LOGPROB_TOLERANCE, "{step:?}, expected {expected}");
    }

    // The standalone policy on the same logits: decide draws nothing (NaN), sample reports its draw's.
    let logits = session.logits(0).unwrap();
    let params = PolicyParams { kind: PolicyKind::Greedy, ..PolicyParams::reset(1.0, 0.3, 0.6, 4) };
    let mut policy = reset::Policy::new(&params, &[], &[], 0).unwrap();
    assert!(policy.decide(&logits).unwrap().logprob.is_nan());
    let (token, decision) = policy.sample(&logits).unwrap();
    let expected = raw_logprob(&logits, token);
    assert_eq!(token, argmax(&logits));
    assert!(expected < -1.0 && decision.logprob <= 0.0, "{decision:?}, expected {expected}");
    assert!((f64::from(decision.logprob) - expected).abs() <= LOGPROB_TOLERANCE, "{decision:?}, expected {expected}");
}

/// Each entry's logprob is (z - max) - log sum exp(z - max) taken in FP32 and double by the library, in its own order,
/// and rounded to an f32: within 2e-7 of the f64 reference on this fixture, where |logprob| is about 4-5 (an f32's ulp
/// there is 4.8e-7).  1e-5 leaves a wide margin yet is far below anything a field read at the wrong offset would give.
const TOP_LOGPROB_TOLERANCE: f64 = 1e-5;

/// The n most likely ids by the raw logits: value descending, ties by the lower id (reset.h).
fn most_likely(logits: &[f32], n: usize) -> Vec<i32> {
    let mut ids: Vec<i32> = (0..logits.len() as i32).collect();
    ids.sort_by(|&a, &b| logits[b as usize].partial_cmp(&logits[a as usize]).unwrap().then(a.cmp(&b)));
    ids.truncate(n);
    ids
}

/// step.top_logprobs against the logits read before the step; the place of the chosen token among them, if any.
fn check_top_logprobs(logits: &[f32], step: &Step, n: usize) -> Option<usize> {
    let top = &step.top_logprobs;
    assert_eq!(top.len(), n, "{step:?}");
    // The tokens, in order, are the top n of the logits (the library orders by logit, so two entries whose logprobs
    // round to one float still come in id order), and their logprobs never increase.
    let tokens: Vec<i32> = top.iter().map(|e| e.token).collect();
    assert_eq!(tokens, most_likely(logits, n), "{step:?}");
    assert!(top.windows(2).all(|pair| pair[0].logprob >= pair[1].logprob), "{top:?}");
    for entry in top {
        let expected = raw_logprob(logits, entry.token);
        assert!((f64::from(entry.logprob) - expected).abs() <= TOP_LOGPROB_TOLERANCE, "{entry:?}, expected {expected}");
    }
    let place = top.iter().position(|e| e.token == step.token);
    if let Some(i) = place {
        // Exactly: the same float as the step's own logprob (reset.h).
        assert_eq!(top[i].logprob.to_bits(), step.logprob.to_bits(), "{step:?}");
    }
    place
}

#[test]
fn top_logprobs_are_the_most_likely_tokens_of_the_logits_each_token_was_drawn_from() {
    let model = model();
    let mut session =
        model.session_with(&SessionOptions { max_context: 64, top_logprobs: 5, ..SessionOptions::default() }).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&ids("prompt.txt")).unwrap();
    for _ in 0..3 {
        let logits = session.logits(0).unwrap(); // before the step: the distribution its token is drawn from
        let step = session.step().unwrap().remove(0);
        assert_eq!(check_top_logprobs(&logits, &step, 5), Some(0), "greedy: the first entry is the token");
        assert_eq!(step.top_logprobs[0], reset::TokenLogprob { token: step.token, logprob: step.logprob });
    }
    // Sampled at T = 2 from the top 3: the chosen token is always among the top 5, not always first, and the
    // entries are still those of the raw logits.
    let sampled =
        PolicyParams { kind: PolicyKind::Fixed, temperature: 2.0, top_k: 3, seed: 5, ..PolicyParams::greedy() };
    session.set_policy(&sampled).unwrap();
    let mut places = Vec::new();
    for _ in 0..8 {
        let logits = session.logits(0).unwrap();
        let step = session.step().unwrap().remove(0);
        places.push(check_top_logprobs(&logits, &step, 5));
    }
    assert!(places.iter().all(Option::is_some) && places.iter().any(|p| *p > Some(0)), "{places:?}");
}

#[test]
fn no_top_logprobs_unless_asked_and_more_than_twenty_is_refused() {
    let model = model();
    let prompt = &ids("prompt.txt")[..4];
    // The default is none, as is 0.
    let zero = SessionOptions { max_context: 16, top_logprobs: 0, ..SessionOptions::default() };
    for mut session in [model.session(16, 1).unwrap(), model.session_with(&zero).unwrap()] {
        session.prefill(prompt).unwrap();
        let step = session.step().unwrap().remove(0);
        assert!(step.token >= 0 && step.top_logprobs.is_empty(), "{step:?}");
    }
    let mut session =
        model.session_with(&SessionOptions { max_context: 16, top_logprobs: 20, ..SessionOptions::default() }).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(prompt).unwrap();
    let logits = session.logits(0).unwrap();
    check_top_logprobs(&logits, &session.step().unwrap().remove(0), 20); // RESET_MAX_TOP_LOGPROBS
    for bad in [21, -1] {
        let options = SessionOptions { top_logprobs: bad, ..SessionOptions::default() };
        let error = model.session_with(&options).err().expect("a top_logprobs outside 0..=20 was taken");
        assert_eq!(error.status, Error::INVALID_ARGUMENT, "{error}");
        assert!(error.message.contains("top_logprobs"), "{error}");
    }
}

#[test]
fn a_sequence_that_has_ended_reports_no_top_logprobs() {
    // Sequence 0 holds only EOS; a repetition penalty of 0.1 multiplies the logit of every token of a sequence's
    // context by 10 (z > 0), which makes the fixture's EOS (z ~ 1.04 after it) its greedy choice.  Sequence 1 gets
    // the prompt too, whose tokens' logits lead once multiplied, so it goes on.
    let model = model();
    let eos = model.info().unwrap().eos_ids[0];
    let options = SessionOptions { max_context: 64, sequences: 2, top_logprobs: 5, ..SessionOptions::default() };
    let mut session = model.session_with(&options).unwrap();
    session.set_policy(&PolicyParams { repetition_penalty: 0.1, ..PolicyParams::greedy() }).unwrap();
    session.prefill(&[eos]).unwrap();
    session.prefill_sequence(1, &ids("prompt.txt")).unwrap();
    let logits = [session.logits(0).unwrap(), session.logits(1).unwrap()];
    let first = session.step().unwrap();
    assert!(first[0].token == eos && first[0].end, "the fixture's sequence 0 no longer ends at once: {:?}", first[0]);
    assert!(!first[1].end, "{:?}", first[1]);
    // The EOS was drawn, so its step has them; its raw logit is far from the top five.
    assert_eq!(check_top_logprobs(&logits[0], &first[0], 5), None);
    check_top_logprobs(&logits[1], &first[1], 5);
    let later = session.step().unwrap();
    assert!(later[0].token == -1 && later[0].end && later[0].logprob.is_nan(), "{:?}", later[0]);
    assert!(later[0].top_logprobs.is_empty(), "{:?}", later[0]);
    assert_eq!(later[1].top_logprobs.len(), 5);
}

// ------------------------------------------------------------------ KV cache types

const KV_STEPS: usize = 8;

/// A greedy session with these options that prefilled the cross-language prompt and then decoded KV_STEPS steps, and
/// the logits it had after the prefill (every type's session holds the same context then, so they compare).
fn decoded<'m>(model: &'m Model, options: &SessionOptions) -> (Session<'m>, Vec<f32>) {
    let vocab = model.info().unwrap().vocab_size;
    let prompt = ids("prompt.txt");
    let mut session = model.session_with(options).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&prompt).unwrap();
    let prefilled = session.logits(0).unwrap();
    for _ in 0..KV_STEPS {
        let step = session.step().unwrap().remove(0);
        assert!((0..vocab).contains(&step.token) && !step.end && step.logprob.is_finite(), "{step:?}");
    }
    assert_eq!(session.len(0), (prompt.len() + KV_STEPS) as i32);
    assert!(session.logits(0).unwrap().iter().all(|z| z.is_finite()));
    (session, prefilled)
}

fn kv_options(kv_cache: KvCache) -> SessionOptions {
    SessionOptions { max_context: 128, kv_cache, ..SessionOptions::default() }
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// What a sequence file says of its KV cache: the header's kv_cache entry, the dtype of each layers.{i}.keys /
/// .values tensor and their bytes all told (from the data offsets).  The header is compact JSON (the library writes
/// it with nlohmann's dump()), so plain text search reads it.
struct FileKv {
    kv_cache: String,
    dtypes: Vec<String>,
    bytes: usize,
}

fn file_kv(path: &Path) -> FileKv {
    let data = std::fs::read(path).unwrap();
    let header_len = u64::from_le_bytes(data[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&data[8..8 + header_len]).unwrap();
    // The text after `"key":` in `text`, up to (not including) `end`.
    let value = |text: &str, key: &str, end: char| -> String {
        let start = text.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key} in {header}")) + key.len() + 3;
        text[start..].split(end).next().unwrap().to_string()
    };
    let kv_cache = value(header, "kv_cache", ',').trim_matches(|c| c == '"' || c == '}').to_string();
    let (mut dtypes, mut bytes) = (Vec::new(), 0);
    // Each tensor's entry runs from its name to the next tensor's; these are the only keys that begin "layers.".
    for entry in header.split("\"layers.").skip(1) {
        dtypes.push(value(entry, "dtype", ',').trim_matches('"').to_string());
        let offsets = value(entry, "data_offsets", ']');
        let (begin, end) = offsets.trim_start_matches('[').split_once(',').unwrap();
        bytes += end.parse::<usize>().unwrap() - begin.parse::<usize>().unwrap();
    }
    FileKv { kv_cache, dtypes, bytes }
}

#[test]
fn an_fp8_session_decodes_and_saves_half_the_kv_bytes_of_the_default_bf16() {
    let dir = Scratch::new("kv-fp8");
    let model = model();
    let layers = model.info().unwrap().n_layers as usize;
    // The default is BF16: a session that names no type computes as one that names BF16, bit for bit.
    let (default, default_logits) = decoded(&model, &SessionOptions { max_context: 128, ..SessionOptions::default() });
    let (bf16, bf16_logits) = decoded(&model, &kv_options(KvCache::Bf16));
    assert_eq!(bits(&bf16_logits), bits(&default_logits));
    assert_eq!((bf16.tokens(0).unwrap(), bits(&bf16.logits(0).unwrap())),
               (default.tokens(0).unwrap(), bits(&default.logits(0).unwrap())));
    let (fp8, fp8_logits) = decoded(&model, &kv_options(KvCache::Fp8));
    let (_, fp32_logits) = decoded(&model, &kv_options(KvCache::Fp32));
    // Attention read keys and values rounded to E4M3 (3 mantissa bits against BF16's 7): the prompt's logits moved
    // from the BF16 cache's, and further from the unrounded FP32 cache's than BF16's are (about 0.13 against 0.007
    // on logits that reach 2.5), yet stay the same model's.
    assert_ne!(bits(&fp8_logits), bits(&bf16_logits));
    let fp8_error = max_difference(&fp8_logits, &fp32_logits);
    let bf16_error = max_difference(&bf16_logits, &fp32_logits);
    assert!(fp8_error > 4.0 * bf16_error && fp8_error < 0.5, "FP8 {fp8_error}, BF16 {bf16_error}");
    // Its file holds the cache as E4M3 bytes: half the BF16 session's KV bytes for the same number of tokens.
    let paths = [dir.0.join("bf16.safetensors"), dir.0.join("fp8.safetensors")];
    bf16.save_sequence(0, &paths[0]).unwrap();
    fp8.save_sequence(0, &paths[1]).unwrap();
    let (bf16_kv, fp8_kv) = (file_kv(&paths[0]), file_kv(&paths[1]));
    assert_eq!((bf16_kv.kv_cache.as_str(), bf16_kv.dtypes), ("bf16", vec!["BF16".to_string(); 2 * layers]));
    assert_eq!((fp8_kv.kv_cache.as_str(), fp8_kv.dtypes), ("fp8", vec!["F8_E4M3".to_string(); 2 * layers]));
    let (fp8_bytes, bf16_bytes) = (fp8_kv.bytes, bf16_kv.bytes);
    assert!(fp8_bytes > 0 && 2 * fp8_bytes == bf16_bytes, "FP8 {fp8_bytes} bytes, BF16 {bf16_bytes}");
    // Another FP8 session takes the file and holds its state, bit for bit.
    let mut restored = model.session_with(&kv_options(KvCache::Fp8)).unwrap();
    restored.load_sequence(0, &paths[1]).unwrap();
    assert_eq!((restored.tokens(0).unwrap(), bits(&restored.logits(0).unwrap())),
               (fp8.tokens(0).unwrap(), bits(&fp8.logits(0).unwrap())));
}

#[test]
fn an_fp32_session_decodes_on_the_cpu_backend_with_twice_the_kv_bytes_of_bf16() {
    // model() is on the CPU backend, the only one with an FP32 cache (the CUDA backend answers UNSUPPORTED).
    let dir = Scratch::new("kv-fp32");
    let model = model();
    let layers = model.info().unwrap().n_layers as usize;
    let (bf16, bf16_logits) = decoded(&model, &kv_options(KvCache::Bf16));
    let (fp32, fp32_logits) = decoded(&model, &kv_options(KvCache::Fp32));
    // Unrounded keys and values: the prompt's logits are not the BF16 cache's, but near them (about 0.007 apart).
    assert_ne!(bits(&fp32_logits), bits(&bf16_logits));
    let difference = max_difference(&fp32_logits, &bf16_logits);
    assert!(difference < 0.05, "{difference}");
    let paths = [dir.0.join("bf16.safetensors"), dir.0.join("fp32.safetensors")];
    bf16.save_sequence(0, &paths[0]).unwrap();
    fp32.save_sequence(0, &paths[1]).unwrap();
    let (bf16_kv, fp32_kv) = (file_kv(&paths[0]), file_kv(&paths[1]));
    assert_eq!((fp32_kv.kv_cache.as_str(), fp32_kv.dtypes), ("fp32", vec!["F32".to_string(); 2 * layers]));
    let (fp32_bytes, bf16_bytes) = (fp32_kv.bytes, bf16_kv.bytes);
    assert!(bf16_bytes > 0 && fp32_bytes == 2 * bf16_bytes, "FP32 {fp32_bytes} bytes, BF16 {bf16_bytes}");
    let mut restored = model.session_with(&kv_options(KvCache::Fp32)).unwrap();
    restored.load_sequence(0, &paths[1]).unwrap();
    assert_eq!((restored.tokens(0).unwrap(), bits(&restored.logits(0).unwrap())),
               (fp32.tokens(0).unwrap(), bits(&fp32.logits(0).unwrap())));
}

// ------------------------------------------------------------------ stop conditions (0.5)

/// The fixture with a tokenizer: stop strings need one.
fn chat_model() -> Model {
    let options = ModelOptions { weights: Weights::Bf16, backend: Backend::Cpu, ..ModelOptions::default() };
    Model::load(source().join("tests/fixtures/chat-model"), &options).expect("chat fixture model")
}

const STOP_PROMPT: [i32; 4] = [10, 11, 12, 13];
/// A stop string the chat fixture's generations do not contain (tests/unit/test_stop.cpp's).
const NEVER_GENERATED: &str = "\x7f\x01\x7f\x02\x7f\x03\x7f\x04";
const REFERENCE_TOKENS: usize = 60;

/// T = 2 over every token: varied text from the random weights, an end-of-generation id rarely (seed 3 draws none in
/// its first REFERENCE_TOKENS; seed 7 does).  The draws are keyed by seed, sequence and step, so after a reset a
/// generation repeats exactly, whatever the stops.
fn sampling_session(model: &Model) -> Session<'_> {
    seeded_session(model, 3)
}

fn seeded_session(model: &Model, seed: u64) -> Session<'_> {
    let mut session = model.session(512, 1).unwrap();
    let policy = PolicyParams { kind: PolicyKind::Fixed, temperature: 2.0, seed, ..PolicyParams::greedy() };
    session.set_policy(&policy).unwrap();
    session
}

/// Reset, prefill STOP_PROMPT and step sequence 0 until it ends: its steps, the ending one last.
fn run(session: &mut Session<'_>) -> Vec<Step> {
    session.reset().unwrap();
    session.prefill(&STOP_PROMPT).unwrap();
    let mut steps = Vec::new();
    for _ in 0..400 {
        let step = session.step().unwrap().remove(0);
        assert!(step.token >= 0, "{step:?}");
        if step.end_reason != EndReason::Stop {
            assert_eq!(step.stop_index, -1, "{step:?}");
        }
        let end = step.end;
        if end {
            let reasons = [EndReason::Eos, EndReason::Stop, EndReason::Length];
            assert!(reasons.contains(&step.end_reason), "{step:?}");
        } else {
            assert_eq!(step.end_reason, EndReason::None, "{step:?}");
        }
        steps.push(step);
        if end {
            assert_eq!(session.step().unwrap_err().status, Error::STATE); // every sequence has ended
            return steps;
        }
    }
    panic!("no end within 400 steps");
}

/// The generation bounded by max_tokens only: what the stops are cut from and checked against.
fn reference(session: &mut Session<'_>) -> Vec<Step> {
    session.set_stop(&StopOptions { max_tokens: REFERENCE_TOKENS as i32, ..StopOptions::default() }).unwrap();
    let steps = run(session);
    assert_eq!(steps.len(), REFERENCE_TOKENS, "the reference met an EOS");
    assert_eq!(steps.last().unwrap().end_reason, EndReason::Length);
    steps
}

fn text_of(steps: &[Step]) -> String {
    steps.iter().map(|s| s.text.as_str()).collect()
}

fn tokens_of(steps: &[Step]) -> Vec<i32> {
    steps.iter().map(|s| s.token).collect()
}

#[test]
fn max_tokens_ends_a_generation_with_length_after_exactly_that_many_tokens() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    let want = reference(&mut session);
    assert!(text_of(&want).chars().count() > 40);
    for n in [1usize, 10] {
        session.set_stop(&StopOptions { max_tokens: n as i32, ..StopOptions::default() }).unwrap();
        let got = run(&mut session);
        assert_eq!(got.len(), n);
        let last = got.last().unwrap();
        assert!(last.end && last.end_reason == EndReason::Length, "{last:?}");
        assert_eq!(tokens_of(&got), tokens_of(&want[..n]));
        assert_eq!(text_of(&got), text_of(&want[..n]));
        assert_eq!(session.len(0), (STOP_PROMPT.len() + n) as i32); // the max_tokens-th token stays in the context
    }
    // A new turn counts afresh: the same budget again after prefilling more.
    session.prefill(&[20, 21]).unwrap();
    let steps: Vec<Step> = (0..10).map(|_| session.step().unwrap().remove(0)).collect();
    let ends: Vec<bool> = steps.iter().map(|s| s.end).collect();
    assert_eq!(ends, [vec![false; 9], vec![true]].concat());
    assert_eq!(steps[9].end_reason, EndReason::Length);
}

#[test]
fn a_stop_string_ends_the_text_where_the_reference_first_contains_it() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    let want = reference(&mut session);
    let text = text_of(&want);
    let chars = |from: usize, to: usize| -> String { text.chars().skip(from).take(to - from).collect() };
    // Cut from the middle of the reference's text, so they end mid-generation: one across the start of the middle
    // token's text (so across tokens), one from the middle character on.  (Counted in characters: the text has
    // multi-byte ones.)
    let boundary = text_of(&want[..want.len() / 2]).chars().count();
    let middle = text.chars().count() / 2;
    let (across, second) = (chars(boundary - 3, boundary + 3), chars(middle, middle + 5));
    let cases = [(vec![across.clone()], false, 0), (vec![NEVER_GENERATED.to_string(), second], true, 1)];
    for (strings, include, index) in cases {
        let stop = strings[index as usize].clone();
        let start = text.find(&stop).unwrap(); // its first occurrence, maybe earlier than where it was cut
        assert!(0 < start && start + stop.len() < text.len(), "{stop:?}");
        let options = StopOptions {
            strings,
            max_tokens: REFERENCE_TOKENS as i32,
            include_stop_string: include,
            ..StopOptions::default()
        };
        session.set_stop(&options).unwrap();
        let got = run(&mut session);
        let last = got.last().unwrap();
        assert!(last.end_reason == EndReason::Stop && last.stop_index == index, "{last:?}");
        let end = if include { start + stop.len() } else { start };
        assert_eq!(text_of(&got), text[..end], "{stop:?}, include {include}");
        assert_eq!(tokens_of(&got), tokens_of(&want[..got.len()]));
        // It stopped at the token whose text completed the string, which is not in the context.
        let n = got.len();
        assert!(text_of(&want[..n - 1]).len() < start + stop.len(), "{stop:?}");
        assert!(start + stop.len() <= text_of(&want[..n]).len(), "{stop:?}");
        assert_eq!(session.len(0), (STOP_PROMPT.len() + n - 1) as i32);
    }
}

/// 0.5: reset_session_held_text.  After every step of a sequence still generating, the text reported so far plus the
/// held text is all the reference had after as many steps; a stop ends with nothing held.
#[test]
fn held_text_is_what_a_stop_string_held_back_and_the_reference_had() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    let want = reference(&mut session);
    assert_eq!(session.held_text(0).unwrap(), ""); // no stop strings: nothing is held back
    let text = text_of(&want);
    let chars = |from: usize, to: usize| -> String { text.chars().skip(from).take(to - from).collect() };
    // The stop strings of the test above: one across the start of the middle token's text, so the tokens before it
    // end with its beginning, which is held back; one from the middle character on.
    let boundary = text_of(&want[..want.len() / 2]).chars().count();
    let middle = text.chars().count() / 2;
    let (across, second) = (chars(boundary - 3, boundary + 3), chars(middle, middle + 5));
    let mut held_steps = 0;
    for (strings, include) in [(vec![across.clone()], false), (vec![NEVER_GENERATED.to_string(), second], true)] {
        let options = StopOptions {
            strings: strings.clone(),
            max_tokens: REFERENCE_TOKENS as i32,
            include_stop_string: include,
            ..StopOptions::default()
        };
        session.set_stop(&options).unwrap();
        session.reset().unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        let mut reported = String::new();
        let mut stopped = false;
        for n in 1..=REFERENCE_TOKENS {
            let step = session.step().unwrap().remove(0);
            reported.push_str(&step.text);
            let held = session.held_text(0).unwrap();
            if step.end {
                assert_eq!(step.end_reason, EndReason::Stop, "{step:?}");
                assert_eq!(held, "", "{strings:?}: an ended sequence holds nothing");
                stopped = true;
                break;
            }
            // Still generating: what was reported plus what is held is all the reference had after n steps.
            assert_eq!(format!("{reported}{held}"), text_of(&want[..n]), "{strings:?} after {n} steps");
            held_steps += !held.is_empty() as usize;
        }
        assert!(stopped, "{strings:?} did not stop");
    }
    assert!(held_steps > 0, "no step held text back, so reported + held checked nothing held");
    // The next prefill forgets held text, as a reset does.
    session.set_stop(&StopOptions { strings: vec![across], ..StopOptions::default() }).unwrap();
    let forgets: [fn(&mut Session<'_>) -> reset::Result<()>; 2] = [|s| s.prefill(&[20, 21]), |s| s.reset()];
    for forget in forgets {
        session.reset().unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        while session.held_text(0).unwrap().is_empty() {
            assert!(!session.step().unwrap()[0].end);
        }
        forget(&mut session).unwrap();
        assert_eq!(session.held_text(0).unwrap(), "");
    }
    // A sequence outside the session's is the library's RESET_ERR_OUT_OF_RANGE.
    for sequence in [1, -1, i32::MAX, i32::MIN] {
        let error = session.held_text(sequence).unwrap_err();
        assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
        assert!(error.message.contains(&format!("sequence {sequence} is outside [0, 1)")), "{error}");
    }
}

#[test]
fn a_stop_id_ends_the_generation_at_its_first_draw() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    let want = reference(&mut session);
    let tokens = tokens_of(&want);
    let stop_id = tokens[12];
    let first = tokens.iter().position(|&t| t == stop_id).unwrap();
    let never = (4..512).find(|i| !tokens.contains(i)).unwrap(); // a second id, which is never drawn
    let options =
        StopOptions { ids: vec![never, stop_id], max_tokens: REFERENCE_TOKENS as i32, ..StopOptions::default() };
    session.set_stop(&options).unwrap();
    let got = run(&mut session);
    assert_eq!(got.len(), first + 1, "{tokens:?}");
    let last = got.last().unwrap();
    assert!(last.token == stop_id && last.end_reason == EndReason::Stop && last.stop_index == -1, "{last:?}");
    assert_eq!(tokens_of(&got), tokens[..first + 1]);
    assert_eq!(text_of(&got), text_of(&want[..first + 1])); // the stop id's text is reported
    assert_eq!(session.len(0), (STOP_PROMPT.len() + first) as i32); // the stop id is not in the context
}

/// Seed 7 draws an end-of-generation id at its 59th token (tests/unit/test_stop.cpp's ignore_eos test).
const EOS_SEED: u64 = 7;
const IGNORE_EOS_TOKENS: usize = 100;

#[test]
fn ignore_eos_generates_past_an_end_of_generation_id_until_max_tokens() {
    let model = chat_model();
    let mut session = seeded_session(&model, EOS_SEED);
    let bounded = StopOptions { max_tokens: IGNORE_EOS_TOKENS as i32, ..StopOptions::default() };
    session.set_stop(&bounded).unwrap();
    let ended = run(&mut session);
    let last = ended.last().unwrap();
    assert!(last.end_reason == EndReason::Eos && ended.len() < IGNORE_EOS_TOKENS, "{last:?}");
    let eos = ended.len() - 1; // the end-of-generation id's step
    assert_eq!(session.len(0), (STOP_PROMPT.len() + eos) as i32); // which left it out of the context
    session.set_stop(&StopOptions { ignore_eos: true, ..bounded.clone() }).unwrap();
    let got = run(&mut session);
    assert_eq!(got.len(), IGNORE_EOS_TOKENS);
    assert_eq!(got.last().unwrap().end_reason, EndReason::Length);
    assert_eq!(tokens_of(&got[..=eos]), tokens_of(&ended)); // the same draws, the id included
    assert!(!got[eos].end && got[eos].end_reason == EndReason::None, "{:?}", got[eos]); // one more token
    assert_eq!(text_of(&got[..eos]), text_of(&ended[..eos]));
    assert_eq!(session.len(0), (STOP_PROMPT.len() + IGNORE_EOS_TOKENS) as i32); // the id entered the context
    // Options without it end at the id again.
    session.set_stop(&bounded).unwrap();
    assert_eq!(tokens_of(&run(&mut session)), tokens_of(&ended));
}

#[test]
fn bad_stop_conditions_are_the_librarys_errors_and_keep_the_conditions_in_force() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    session.set_stop(&StopOptions { max_tokens: 4, ..StopOptions::default() }).unwrap();
    let strings =
        |list: &[&str]| StopOptions { strings: list.iter().map(|s| s.to_string()).collect(), ..StopOptions::default() };
    let ids = |list: Vec<i32>| StopOptions { ids: list, ..StopOptions::default() };
    let long = "a".repeat(257);
    let cases = [
        (strings(&[""]), Error::INVALID_ARGUMENT, "options->strings[0] is empty"),
        (strings(&["ok", ""]), Error::INVALID_ARGUMENT, "options->strings[1] is empty"),
        (ids(vec![1, 512]), Error::OUT_OF_RANGE, "options->ids[1] = 512 is outside the vocabulary [0, 512)"),
        (ids(vec![-1]), Error::OUT_OF_RANGE, "options->ids[0] = -1"),
        (strings(&[long.as_str()]), Error::INVALID_ARGUMENT, "options->strings[0] is longer than 256 bytes"),
        (strings(&["x"; 17]), Error::INVALID_ARGUMENT, "options->string_count = 17 is above 16"),
        (ids(vec![1; 257]), Error::INVALID_ARGUMENT, "options->id_count = 257 is above 256"),
        (StopOptions { max_tokens: -1, ..StopOptions::default() }, Error::INVALID_ARGUMENT,
         "options->max_tokens = -1 is negative"),
        // C would cut "b\0c" to "b": refused here, as every string with a NUL is.
        (strings(&["a", "b\0c"]), Error::INVALID_ARGUMENT, "stop string 1 holds a NUL byte"),
    ];
    for (options, status, message) in cases {
        let error = session.set_stop(&options).unwrap_err();
        assert_eq!(error.status, status, "{error}");
        let name = if status == Error::OUT_OF_RANGE { "RESET_ERR_OUT_OF_RANGE" } else { "RESET_ERR_INVALID_ARGUMENT" };
        assert_eq!(error.name, name, "{error}");
        assert!(error.message.contains(message), "{error}, expected {message:?}");
    }
    // None of those changed the conditions: max_tokens 4 still ends the generation, also after set_policy.
    let steps = run(&mut session);
    assert_eq!(steps.len(), 4);
    assert_eq!(steps[3].end_reason, EndReason::Length);
    let policy = session.policy().unwrap();
    session.set_policy(&policy).unwrap();
    assert_eq!(run(&mut session).len(), 4);
    // The longest string is taken.
    let longest = StopOptions { max_tokens: 5, ..strings(&["a".repeat(256).as_str(), "é"]) };
    session.set_stop(&longest).unwrap();
    assert_eq!(run(&mut session).len(), 5);
}

#[test]
fn clearing_the_stop_conditions_lets_the_generation_run_on() {
    let model = chat_model();
    let mut session = sampling_session(&model);
    let want = tokens_of(&reference(&mut session));
    // NULL options, and options that set none.
    let clears: [fn(&mut Session<'_>) -> reset::Result<()>; 2] =
        [|s| s.clear_stop(), |s| s.set_stop(&StopOptions::default())];
    for clear in clears {
        let options = StopOptions {
            strings: vec![NEVER_GENERATED.to_string()],
            ids: vec![want[5]],
            max_tokens: 3,
            include_stop_string: false,
            ignore_eos: false,
        };
        session.set_stop(&options).unwrap();
        assert_eq!(run(&mut session).len(), 3);
        clear(&mut session).unwrap();
        session.reset().unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        let steps: Vec<Step> = (0..REFERENCE_TOKENS + 5).map(|_| session.step().unwrap().remove(0)).collect();
        assert_eq!(tokens_of(&steps[..REFERENCE_TOKENS]), want); // past the stop id and max_tokens
        assert!(steps.iter().all(|s| !s.end && s.end_reason == EndReason::None));
    }
}

#[test]
fn stop_strings_need_a_tokenizer() {
    let model = model();
    assert!(model.tokenizer().is_none()); // qwen3-tied carries none
    let mut session = model.session(64, 1).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    let error = session.set_stop(&StopOptions { strings: vec!["a".into()], ..StopOptions::default() }).unwrap_err();
    assert_eq!(error.status, Error::UNSUPPORTED, "{error}");
    assert!(error.message.contains("tokenizer"), "{error}");
    session.set_stop(&StopOptions { max_tokens: 2, ..StopOptions::default() }).unwrap(); // max_tokens (and ids) do not
    session.prefill(&ids("prompt.txt")).unwrap();
    let steps: Vec<Step> = (0..2).map(|_| session.step().unwrap().remove(0)).collect();
    let ends: Vec<(bool, EndReason)> = steps.iter().map(|s| (s.end, s.end_reason)).collect();
    assert_eq!(ends, [(false, EndReason::None), (true, EndReason::Length)]);
    assert_eq!(steps[1].text, ""); // no tokenizer, no text
}

// ------------------------------------------------------------------ truncation (0.6)

const TRUNCATE_STEPS: usize = 10;

/// T = 1.5 over every token, seeded: the draws are keyed by seed, sequence and the count of tokens the sequence drew,
/// so the two sequences draw different tokens from one prompt, and a sequence cut back draws as a new session's does.
fn two_sequence_session(model: &Model) -> Session<'_> {
    with_two_sequence_policy(model.session(512, 2).unwrap())
}

/// two_sequence_session with this KV cache type.
fn two_sequence_session_with(model: &Model, kv_cache: KvCache) -> Session<'_> {
    let options = SessionOptions { max_context: 512, sequences: 2, kv_cache, ..SessionOptions::default() };
    with_two_sequence_policy(model.session_with(&options).unwrap())
}

fn with_two_sequence_policy(mut session: Session<'_>) -> Session<'_> {
    let policy = PolicyParams { kind: PolicyKind::Fixed, temperature: 1.5, seed: 5, ..PolicyParams::greedy() };
    session.set_policy(&policy).unwrap();
    session
}

/// `steps` decode steps of both sequences: the tokens each drew (none of them ended).
fn decode_both(session: &mut Session<'_>, steps: usize) -> [Vec<i32>; 2] {
    let mut drawn = [Vec::new(), Vec::new()];
    for _ in 0..steps {
        for step in session.step().unwrap() {
            assert!(step.token >= 0 && !step.end, "{step:?}");
            drawn[step.sequence as usize].push(step.token);
        }
    }
    drawn
}

#[test]
fn a_prompt_cut_back_one_token_and_prefilled_again_draws_the_same_tokens() {
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    assert_eq!((session.tokens(0).unwrap(), session.tokens(1).unwrap()), (vec![], vec![])); // nothing prefilled yet
    session.prefill(&STOP_PROMPT).unwrap();
    let first = decode_both(&mut session, TRUNCATE_STEPS);
    assert_ne!(first[0], first[1]); // the sequences drew apart, so the checks below tell them apart
    for s in 0..2 {
        // The prompt, then every token drawn.
        assert_eq!(session.tokens(s).unwrap(), [&STOP_PROMPT[..], &first[s as usize]].concat(), "{s}");
        assert_eq!(session.len(s), (STOP_PROMPT.len() + TRUNCATE_STEPS) as i32);
    }
    let (kept, last) = STOP_PROMPT.split_at(STOP_PROMPT.len() - 1);
    session.truncate(kept.len() as i32).unwrap();
    for s in 0..2 {
        assert_eq!(session.tokens(s).unwrap(), kept);
        assert_eq!(session.len(s), kept.len() as i32);
    }
    session.prefill(last).unwrap(); // the prompt's last token again, as tokens() gives it
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), first); // each sequence's own tokens, as the first time
    for s in 0..2 {
        assert_eq!(session.tokens(s).unwrap(), [&STOP_PROMPT[..], &first[s as usize]].concat(), "{s}");
    }
    // A sequence that holds exactly `length` tokens is unchanged, its logits too.
    let logits = [session.logits(0).unwrap(), session.logits(1).unwrap()];
    session.truncate(session.len(0)).unwrap();
    assert_eq!(session.tokens(0).unwrap(), [&STOP_PROMPT[..], &first[0]].concat());
    assert_eq!([session.logits(0).unwrap(), session.logits(1).unwrap()], logits);
    decode_both(&mut session, 1); // and it decodes on
    // One sequence cut back to its prompt and prefilled again draws its own tokens again; the other goes on.
    let held = session.len(0);
    session.truncate_sequence(1, kept.len() as i32).unwrap();
    assert_eq!(session.tokens(1).unwrap(), kept);
    assert_eq!(session.len(0), held);
    session.prefill_sequence(1, last).unwrap();
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS)[1], first[1]);
}

#[test]
fn tokens_reads_a_context_longer_than_the_first_buffer() {
    // 300 ids: past the 256 the binding asks with first, so it asks again with the size the library reported.
    let prompt: Vec<i32> = (0..300).map(|i| (7 * i) % 500 + 3).collect();
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&prompt).unwrap();
    assert_eq!((session.tokens(0).unwrap(), session.tokens(1).unwrap()), (prompt.clone(), prompt));
    session.truncate(0).unwrap(); // every sequence to nothing: a reset but for a pending cancel
    assert_eq!((session.tokens(0).unwrap(), session.len(0)), (vec![], 0));
}

#[test]
fn truncation_errors_are_the_librarys_and_leave_the_session_as_it_was() {
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&STOP_PROMPT).unwrap();
    decode_both(&mut session, 3);
    let held = (STOP_PROMPT.len() + 3) as i32;
    let before = [session.tokens(0).unwrap(), session.tokens(1).unwrap()];
    let out_of_range = |error: Error| {
        assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
    };
    // More tokens than a sequence holds, or fewer than none.
    for length in [held + 1, -1, i32::MAX, i32::MIN] {
        out_of_range(session.truncate(length).unwrap_err());
        out_of_range(session.truncate_sequence(1, length).unwrap_err());
    }
    // A sequence outside the session's, in every call that takes one.
    for sequence in [2, -1, i32::MAX, i32::MIN] {
        out_of_range(session.truncate_sequence(sequence, 1).unwrap_err());
        out_of_range(session.tokens(sequence).unwrap_err());
    }
    assert_eq!([session.tokens(0).unwrap(), session.tokens(1).unwrap()], before); // the refusals changed nothing
    // Cut back and not prefilled since: nothing to draw from, no logits.
    session.truncate(held - 1).unwrap();
    assert_eq!((session.len(0), session.len(1)), (held - 1, held - 1));
    let errors = [session.step().unwrap_err(), session.logits(0).unwrap_err(), session.logits(1).unwrap_err()];
    for error in errors {
        assert_eq!((error.status, error.name.as_str()), (Error::STATE, "RESET_ERR_STATE"), "{error}");
    }
    session.prefill(&[20]).unwrap();
    decode_both(&mut session, 1);
    // One sequence cut back: the session cannot step until it is prefilled, and the other keeps its tokens and its
    // logits.
    let held = session.len(0);
    let (kept, logits) = (session.tokens(0).unwrap(), session.logits(0).unwrap());
    session.truncate_sequence(1, 2).unwrap();
    assert_eq!((session.len(1), session.len(0)), (2, held));
    assert_eq!(session.tokens(0).unwrap(), kept);
    let error = session.step().unwrap_err();
    assert!(error.status == Error::STATE && error.message.contains("sequence 1"), "{error}");
    assert_eq!(session.logits(0).unwrap(), logits);
    session.prefill_sequence(1, &[20, 21]).unwrap();
    assert_eq!(session.tokens(1).unwrap(), [STOP_PROMPT[0], STOP_PROMPT[1], 20, 21]);
    assert_eq!(session.len(0), held);
    decode_both(&mut session, 1);
    // Cut to 0, a sequence is prefilled with prefill_sequence like any other.
    session.truncate_sequence(1, 0).unwrap();
    assert_eq!((session.tokens(1).unwrap(), session.len(0)), (vec![], held + 1));
    session.prefill_sequence(1, &[22]).unwrap();
    assert_eq!(session.tokens(1).unwrap(), [22]);
    decode_both(&mut session, 1);
}

// ------------------------------------------------------------------ logit bias (0.6)

/// +100 makes every draw this token (not an end-of-generation id of the chat fixture: 1, 3).
const BIASED_TOKEN: i32 = 300;
const BIAS_STEPS: usize = 20;

/// The raw logits with `bias` added as reset.h says: one f32 addition each.
fn biased(logits: &[f32], bias: &[(i32, f32)]) -> Vec<f32> {
    let mut z = logits.to_vec();
    for &(token, value) in bias {
        z[token as usize] += value;
    }
    z
}

#[test]
fn greedy_draws_the_argmax_of_the_biased_logits_and_logprob_stays_raw() {
    let model = chat_model();
    let options = SessionOptions { max_context: 64, top_logprobs: 1, ..SessionOptions::default() };
    let mut session = model.session_with(&options).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&STOP_PROMPT).unwrap();
    let raw = session.logits(0).unwrap();
    let mut order: Vec<i32> = (0..raw.len() as i32).collect();
    order.sort_by(|&a, &b| raw[b as usize].total_cmp(&raw[a as usize])); // stable: ties in id order
    let (banned, lifted) = (order[0], order[2]);
    // Ban the argmax and lift the third most likely token by 5: it wins, where a binding that dropped the values
    // would draw the argmax, and one that dropped the +5 only the second.
    let bias = [(banned, f32::NEG_INFINITY), (lifted, 5.0)];
    assert_eq!(argmax(&biased(&raw, &bias)), lifted, "{:?}", &order[..4]);
    session.set_logit_bias(&bias).unwrap();
    for n in 0..5 {
        // The bias stays in force step after step.
        let logits = session.logits(0).unwrap(); // raw: the bias is not in them
        let want = biased(&logits, &bias);
        let step = session.step().unwrap().remove(0);
        let mut sorted = want.clone();
        sorted.sort_by(f32::total_cmp);
        if sorted[sorted.len() - 1] - sorted[sorted.len() - 2] > 1e-4 {
            // a near-tie may round either way
            assert_eq!(step.token, argmax(&want), "{n}: {step:?}");
        }
        assert!(step.token != banned && !step.end, "{n}: {step:?}");
        // logprob and top_logprobs are of the raw softmax (the banned argmax still leads there), not of the biased
        // one, which differs by far more than the tolerance at the first step.
        let expected = raw_logprob(&logits, step.token);
        assert!((f64::from(step.logprob) - expected).abs() <= LOGPROB_TOLERANCE, "{n}: {step:?}, expected {expected}");
        assert_eq!(step.top_logprobs[0].token, argmax(&logits), "{n}: {step:?}");
        if n == 0 {
            assert_eq!(step.token, lifted, "{step:?}");
            let of_biased = raw_logprob(&want, step.token);
            assert!((f64::from(step.logprob) - of_biased).abs() > 100.0 * LOGPROB_TOLERANCE, "{step:?}");
        }
    }
}

/// T = 1 over every token, seeded: two sequences that draw apart, as two_sequence_session's.
fn biased_sampling_session(model: &Model) -> Session<'_> {
    let mut session = model.session(512, 2).unwrap();
    let policy = PolicyParams { kind: PolicyKind::Fixed, temperature: 1.0, seed: 9, ..PolicyParams::greedy() };
    session.set_policy(&policy).unwrap();
    session
}

#[test]
fn a_large_bias_draws_its_token_at_every_step_until_cleared() {
    let model = chat_model();
    let mut plain = biased_sampling_session(&model);
    plain.prefill(&STOP_PROMPT).unwrap();
    let want = decode_both(&mut plain, 15);
    assert!(want[0] != want[1] && !want.concat().contains(&BIASED_TOKEN), "{want:?}");
    // Count 0 from clear_logit_bias, and from an empty slice.
    let clears: [fn(&mut Session<'_>) -> reset::Result<()>; 2] = [|s| s.clear_logit_bias(), |s| s.set_logit_bias(&[])];
    for (c, clear) in clears.iter().enumerate() {
        let mut session = biased_sampling_session(&model);
        session.set_logit_bias(&[(BIASED_TOKEN, 100.0)]).unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        let all_biased = |n: usize| [vec![BIASED_TOKEN; n], vec![BIASED_TOKEN; n]];
        assert_eq!(decode_both(&mut session, BIAS_STEPS), all_biased(BIAS_STEPS));
        // It stays through reset and set_policy.
        session.reset().unwrap();
        let policy = session.policy().unwrap();
        session.set_policy(&policy).unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        assert_eq!(decode_both(&mut session, 3), all_biased(3));
        // Cleared, the draws are a session's that never had a bias (keyed by seed, sequence and count).
        clear(&mut session).unwrap();
        session.reset().unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        assert_eq!(decode_both(&mut session, 15), want, "clear {c}");
        // Set and cleared before the prefill: nothing of it is left either.
        let mut session = biased_sampling_session(&model);
        session.set_logit_bias(&[(BIASED_TOKEN, 100.0), (7, f32::NEG_INFINITY)]).unwrap();
        clear(&mut session).unwrap();
        session.prefill(&STOP_PROMPT).unwrap();
        assert_eq!(decode_both(&mut session, 15), want, "clear {c}");
    }
}

#[test]
fn bad_logit_biases_are_the_librarys_errors_and_keep_the_bias_in_force() {
    let model = chat_model();
    let mut session = model.session(64, 1).unwrap();
    session.set_policy(&PolicyParams::greedy()).unwrap();
    session.prefill(&STOP_PROMPT).unwrap();
    assert_ne!(argmax(&session.logits(0).unwrap()), 42);
    session.set_logit_bias(&[(42, 100.0)]).unwrap();
    let too_many: Vec<(i32, f32)> = (0..reset::MAX_LOGIT_BIAS as i32 + 1).map(|t| (t % 512, 1.0)).collect();
    let every_token_banned: Vec<(i32, f32)> = (0..512).map(|t| (t, f32::NEG_INFINITY)).collect();
    let invalid = Error::INVALID_ARGUMENT;
    let cases: [(&[(i32, f32)], u32, &str); 9] = [
        (&[(5, 1.0), (6, f32::NAN)], invalid, "entries[1].bias = nan is outside [-100, 100]"),
        (&[(5, f32::INFINITY)], invalid, "entries[0].bias = inf is outside [-100, 100]"),
        (&[(5, 150.0)], invalid, "entries[0].bias = 150.000000 is outside [-100, 100]"),
        (&[(5, -100.5)], invalid, "entries[0].bias = -100.500000 is outside [-100, 100]"),
        (&[(6, 1.0), (5, 2.0), (6, 1.0)], invalid, "token 6 is listed twice"),
        (&[(5, 1.0), (512, 1.0)], Error::OUT_OF_RANGE, "entries[1].token = 512 is outside the vocabulary [0, 512)"),
        (&[(-1, 1.0)], Error::OUT_OF_RANGE, "entries[0].token = -1 is outside the vocabulary"),
        (&too_many, invalid, "count 1025 is above RESET_MAX_LOGIT_BIAS (1024)"),
        (&every_token_banned, invalid, "every token of the vocabulary is banned"),
    ];
    for (bias, status, message) in cases {
        let error = session.set_logit_bias(bias).unwrap_err();
        let name = if status == Error::OUT_OF_RANGE { "RESET_ERR_OUT_OF_RANGE" } else { "RESET_ERR_INVALID_ARGUMENT" };
        assert_eq!((error.status, error.name.as_str()), (status, name), "{error}");
        assert!(error.message.contains(message), "{error}, expected {message:?}");
    }
    // None of those changed the bias: +100 on 42 still draws 42, also after set_policy and reset.
    assert_eq!(session.step().unwrap()[0].token, 42);
    session.set_policy(&PolicyParams::greedy()).unwrap();
    assert_eq!(session.step().unwrap()[0].token, 42);
    session.reset().unwrap();
    session.prefill(&STOP_PROMPT).unwrap();
    assert_eq!(session.step().unwrap()[0].token, 42);
    // The ends of the range are taken, and so is a ban of every token but one.
    session.set_logit_bias(&[(42, -100.0), (43, 100.0)]).unwrap();
    assert_eq!(session.step().unwrap()[0].token, 43);
    let all_but_77: Vec<(i32, f32)> = (0..512).filter(|&t| t != 77).map(|t| (t, f32::NEG_INFINITY)).collect();
    session.set_logit_bias(&all_but_77).unwrap();
    assert_eq!(session.step().unwrap()[0].token, 77);
}

// ------------------------------------------------------------------ copying a sequence (0.7)

const FORCED_STEPS: usize = 6;

/// two_sequence_session whose sequences both drew BIASED_TOKEN (+100 forces it) FORCED_STEPS times after STOP_PROMPT:
/// one state reached in lockstep, FORCED_STEPS draws counted in each.  The bias is cleared after.
fn forced_session(model: &Model) -> Session<'_> {
    let mut session = two_sequence_session(model);
    session.set_logit_bias(&[(BIASED_TOKEN, 100.0)]).unwrap();
    session.prefill(&STOP_PROMPT).unwrap();
    let forced = vec![BIASED_TOKEN; FORCED_STEPS];
    assert_eq!(decode_both(&mut session, FORCED_STEPS), [forced.clone(), forced]);
    session.clear_logit_bias().unwrap();
    session
}

#[test]
fn a_copy_holds_the_sources_tokens_and_logits_and_draws_with_its_own_key_from_its_count() {
    let model = chat_model();
    // The reference: two sequences in one state, drawing on from it each with its own key.
    let want = decode_both(&mut forced_session(&model), TRUNCATE_STEPS);
    assert_ne!(want[0], want[1]);
    let mut session = forced_session(&model);
    // Sequence 1 goes its own way: cut back to the prompt (no draw counted) and given other tokens.
    session.truncate_sequence(1, STOP_PROMPT.len() as i32).unwrap();
    session.prefill_sequence(1, &[20, 21]).unwrap();
    let (source, logits) = (session.tokens(0).unwrap(), session.logits(0).unwrap());
    assert_ne!(session.logits(1).unwrap(), logits);
    session.copy_sequence(0, 1).unwrap();
    // The target holds the source's tokens and logits, bit for bit; the source is left as it was.
    assert_eq!((session.tokens(0).unwrap(), session.tokens(1).unwrap()), (source.clone(), source));
    assert_eq!((session.logits(0).unwrap(), session.logits(1).unwrap()), (logits.clone(), logits));
    // And its count of draws, with sequence 1's key: both draw on as the lockstep pair does.
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), want);
}

#[test]
fn copy_refusals_are_out_of_range_and_a_copy_onto_itself_changes_nothing() {
    let model = chat_model();
    let (mut session, mut twin) = (two_sequence_session(&model), two_sequence_session(&model));
    for s in [&mut session, &mut twin] {
        s.prefill(&STOP_PROMPT).unwrap();
        decode_both(s, 3);
    }
    let before = [session.tokens(0).unwrap(), session.tokens(1).unwrap()];
    let logits = [session.logits(0).unwrap(), session.logits(1).unwrap()];
    assert_ne!(before[0], before[1]);
    session.copy_sequence(1, 1).unwrap();
    session.copy_sequence(0, 0).unwrap();
    for (from, to) in [(0, 2), (2, 0), (-1, 1), (1, -1), (i32::MAX, 0), (0, i32::MIN)] {
        let error = session.copy_sequence(from, to).unwrap_err();
        assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
    }
    assert_eq!([session.tokens(0).unwrap(), session.tokens(1).unwrap()], before);
    assert_eq!([session.logits(0).unwrap(), session.logits(1).unwrap()], logits);
    // Nothing else moved either: both sequences draw on as the twin's, which was never asked.
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), decode_both(&mut twin, TRUNCATE_STEPS));
}

// ------------------------------------------------------------------ saving and loading a sequence (0.8)

/// A scratch_dir removed when dropped, so a failing assertion leaves nothing behind.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch(scratch_dir(name))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Logits as their bits: `==` on f32 would take -0.0 for 0.0.
fn bits(logits: &[f32]) -> Vec<u32> {
    logits.iter().map(|x| x.to_bits()).collect()
}

/// Both sequences' tokens and logits (as bits).
// Sequence 1 holds what sequence 0 saved (`source`): top_k = 1 draws the argmax whatever the key, so the two
// continue exactly alike, their tokens `source` and then the same draws.
fn continues_as_the_saved_one(session: &mut Session<'_>, source: &[i32]) {
    let policy =
        PolicyParams { kind: PolicyKind::Fixed, temperature: 1.5, seed: 5, top_k: 1, ..PolicyParams::greedy() };
    session.set_policy(&policy).unwrap();
    let drawn = decode_both(session, TRUNCATE_STEPS);
    assert_eq!(drawn[0], drawn[1]);
    let [zero, one] = state_of(session);
    assert_eq!(zero, one);
    assert_eq!(zero.0, [source, &drawn[0]].concat());
}

fn state_of(session: &Session<'_>) -> [(Vec<i32>, Vec<u32>); 2] {
    [0, 1].map(|s| (session.tokens(s).unwrap(), bits(&session.logits(s).unwrap())))
}

#[cfg(unix)]
#[test]
fn sequences_saved_and_loaded_into_a_new_session_hold_their_state_and_draw_on_as_before() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = Scratch::new("save");
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&STOP_PROMPT).unwrap();
    let first = decode_both(&mut session, TRUNCATE_STEPS);
    assert_ne!(first[0], first[1]);
    // One file named by a &str, one whose name is not UTF-8: it reaches the OS as itself.
    let paths = [dir.0.join("sequence-0.safetensors"), dir.0.join(OsStr::from_bytes(b"sequence-\xff.safetensors"))];
    session.save_sequence(0, paths[0].to_str().unwrap()).unwrap();
    session.save_sequence(1, &paths[1]).unwrap();
    assert!(paths[0].is_file() && paths[1].is_file());
    let saved = state_of(&session);
    let mut restored = two_sequence_session(&model);
    restored.load_sequence(0, &paths[0]).unwrap();
    restored.load_sequence(1, paths[1].as_os_str()).unwrap();
    // Each sequence holds what was saved, bit for bit, and the saving session is left as it was.
    assert_eq!(state_of(&restored), saved);
    assert_eq!(state_of(&session), saved);
    for s in 0..2 {
        assert_eq!(saved[s].0, [&STOP_PROMPT[..], &first[s]].concat(), "{s}");
        assert_eq!(restored.len(s as i32), saved[s].0.len() as i32);
    }
    // Same seed, same sequence indices, and the saved counts of draws: both sequences draw on, sampled, exactly as
    // the saving session's do.
    assert_eq!(decode_both(&mut restored, TRUNCATE_STEPS), decode_both(&mut session, TRUNCATE_STEPS));
}

#[test]
fn a_sequence_loaded_into_another_holds_the_saved_tokens_and_logits_and_continues_as_it_does() {
    let dir = Scratch::new("load-into-another");
    let path = dir.0.join("sequence.safetensors");
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&STOP_PROMPT).unwrap();
    let first = decode_both(&mut session, TRUNCATE_STEPS);
    assert_ne!(first[0], first[1]);
    // Sequence 1 goes further its own way: cut back to the prompt and given other tokens.
    session.truncate_sequence(1, STOP_PROMPT.len() as i32).unwrap();
    session.prefill_sequence(1, &[20, 21]).unwrap();
    let (source, logits) = (session.tokens(0).unwrap(), bits(&session.logits(0).unwrap()));
    session.save_sequence(0, &path).unwrap();
    assert_eq!(session.tokens(1).unwrap(), [&STOP_PROMPT[..], &[20, 21]].concat());
    assert_ne!(bits(&session.logits(1).unwrap()), logits);
    session.load_sequence(1, &path).unwrap();
    // The target holds the saved tokens and logits, bit for bit; the saved sequence is left as it was.
    assert_eq!(state_of(&session), [(source.clone(), logits.clone()), (source.clone(), logits)]);
    assert_eq!((session.len(0), session.len(1)), (source.len() as i32, source.len() as i32));
    continues_as_the_saved_one(&mut session, &source);
}

#[test]
fn a_loaded_sequence_draws_with_its_own_key_from_the_saved_count_of_draws() {
    let dir = Scratch::new("load-count");
    let path = dir.0.join("sequence.safetensors");
    let model = chat_model();
    // The reference: two sequences in one state, drawing on from it each with its own key.
    let want = decode_both(&mut forced_session(&model), TRUNCATE_STEPS);
    assert_ne!(want[0], want[1]);
    let mut session = forced_session(&model);
    // Sequence 1 cut back and given the forced tokens as prompt: the same context, but no draw counted, so it would
    // draw as a new sequence does.  The file brings the saved sequence's count of draws.
    session.truncate_sequence(1, STOP_PROMPT.len() as i32).unwrap();
    session.prefill_sequence(1, &[BIASED_TOKEN; FORCED_STEPS]).unwrap();
    assert_eq!(session.tokens(1).unwrap(), session.tokens(0).unwrap());
    session.save_sequence(0, &path).unwrap();
    session.load_sequence(1, &path).unwrap();
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), want);
}

#[test]
fn load_refusals_are_the_librarys_errors_and_leave_the_sequence_as_it_was() {
    let dir = Scratch::new("load-refusals");
    let saved = dir.0.join("saved.safetensors");
    let model = chat_model();
    let (mut session, mut twin) = (two_sequence_session(&model), two_sequence_session(&model));
    for s in [&mut session, &mut twin] {
        s.prefill(&STOP_PROMPT).unwrap();
        decode_both(s, 3);
    }
    session.save_sequence(0, &saved).unwrap();
    // The other identity a file carries besides its KV cache type (checked in the next test): the weights format.
    // The same checkpoint quantized on load computes other keys and values.
    let options = ModelOptions { weights: Weights::Nvfp4W4A16, backend: Backend::Cpu, ..ModelOptions::default() };
    let nvfp4 = Model::load(source().join("tests/fixtures/chat-model"), &options).unwrap();
    let other_weights = dir.0.join("nvfp4.safetensors");
    let mut quantized = nvfp4.session(512, 2).unwrap();
    quantized.prefill(&STOP_PROMPT).unwrap();
    quantized.save_sequence(0, &other_weights).unwrap();
    // The other way round too: a BF16 model's file does not load into the quantized one's session.
    let error = quantized.load_sequence(1, &saved).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::SHAPE, "RESET_ERR_SHAPE"), "{error}");
    let mut short = model.session(STOP_PROMPT.len() as i32 + 2, 1).unwrap(); // the saved sequence holds 3 more
    let error = short.load_sequence(0, &saved).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::CONTEXT_OVERFLOW, "RESET_ERR_CONTEXT_OVERFLOW"), "{error}");
    let data = std::fs::read(&saved).unwrap();
    let header_len = u64::from_le_bytes(data[..8].try_into().unwrap()) as usize;
    // Cut in the length, in the header, and before the last byte of the tensors.
    let truncated: Vec<PathBuf> = [4, 8 + header_len / 2, data.len() - 1]
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let path = dir.0.join(format!("truncated-{i}.safetensors"));
            std::fs::write(&path, &data[..size]).unwrap();
            path
        })
        .collect();
    // A safetensors file, but no libreset sequence file.
    let not_a_sequence = source().join("tests/fixtures/models/qwen3-tied/reference.safetensors");
    let before = state_of(&session);
    assert_ne!(before[0].0, before[1].0);
    let (io, shape, format) = (Error::IO, Error::SHAPE, Error::FORMAT);
    let mut refusals = vec![
        (io, 1, dir.0.join("missing.safetensors"), "missing.safetensors"),
        (io, 1, dir.0.clone(), "load-refusals"), // a directory
        (shape, 1, other_weights, "weights"),
        (format, 1, not_a_sequence, "not a valid libreset sequence file"),
    ];
    refusals.extend(truncated.into_iter().map(|path| (format, 1, path, "truncated")));
    refusals.extend([2, -1, i32::MAX, i32::MIN].map(|sequence| (Error::OUT_OF_RANGE, sequence, saved.clone(), "")));
    for (status, sequence, path, message) in refusals {
        let error = session.load_sequence(sequence, &path).unwrap_err();
        assert_eq!(error.status, status, "{} {error}", path.display());
        assert!(error.message.contains(message), "{error}");
    }
    let never_written = dir.0.join("never-written.safetensors");
    for sequence in [2, -1, i32::MAX, i32::MIN] {
        let error = session.save_sequence(sequence, &never_written).unwrap_err();
        assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
    }
    assert!(!never_written.exists());
    let error = session.save_sequence(0, dir.0.join("no-such-folder/sequence.safetensors")).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::IO, "RESET_ERR_IO"), "{error}");
    assert!(error.message.contains("no-such-folder"), "{error}");
    // C would read the path up to its NUL: refused, not cut short to the file saved above (and no panic).
    let cut = dir.0.join("saved.safetensors\0ignored");
    for error in [session.load_sequence(1, &cut).unwrap_err(), session.save_sequence(1, &cut).unwrap_err()] {
        assert_eq!((error.status, error.name.as_str()), (Error::INVALID_ARGUMENT, "RESET_ERR_INVALID_ARGUMENT"));
    }
    assert_eq!(std::fs::read(&saved).unwrap(), data);
    // Every refusal left both sequences as they were, bit for bit, and they draw on as the twin's.
    assert_eq!(state_of(&session), before);
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), decode_both(&mut twin, TRUNCATE_STEPS));
}

#[test]
fn a_sequence_file_of_another_kv_cache_type_is_refused_with_shape_and_changes_nothing() {
    let dir = Scratch::new("kv-cache-refusals");
    let model = chat_model();
    let saved = |kv_cache: KvCache, name: &str| {
        let mut session = two_sequence_session_with(&model, kv_cache);
        session.prefill(&STOP_PROMPT).unwrap();
        decode_both(&mut session, 3);
        let path = dir.0.join(format!("{name}.safetensors"));
        session.save_sequence(0, &path).unwrap();
        path
    };
    let (fp32_file, fp8_file, bf16_file) =
        (saved(KvCache::Fp32, "fp32"), saved(KvCache::Fp8, "fp8"), saved(KvCache::Bf16, "bf16"));
    // A default session's cache is BF16: the FP32 and FP8 files are another type, whatever else they share.
    let (mut session, mut twin) = (two_sequence_session(&model), two_sequence_session(&model));
    for s in [&mut session, &mut twin] {
        s.prefill(&STOP_PROMPT).unwrap();
        decode_both(s, 3);
    }
    let before = state_of(&session);
    assert_ne!(before[0].0, before[1].0);
    for (path, name) in [(&fp32_file, "fp32"), (&fp8_file, "fp8")] {
        let error = session.load_sequence(1, path).unwrap_err();
        assert_eq!((error.status, error.name.as_str()), (Error::SHAPE, "RESET_ERR_SHAPE"), "{error}");
        assert!(error.message.contains(&format!("a KV cache of {name}; this session has bf16")), "{error}");
    }
    // Both sequences are as they were, bit for bit, and draw on as the twin's.
    assert_eq!(state_of(&session), before);
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), decode_both(&mut twin, TRUNCATE_STEPS));
    // The other way round: an FP32 session refuses the BF16 file, and takes the file of its own type.
    let mut fp32 = two_sequence_session_with(&model, KvCache::Fp32);
    let error = fp32.load_sequence(0, &bf16_file).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::SHAPE, "RESET_ERR_SHAPE"), "{error}");
    assert!(error.message.contains("a KV cache of bf16; this session has fp32"), "{error}");
    fp32.load_sequence(0, &fp32_file).unwrap();
    assert_eq!(fp32.len(0), (STOP_PROMPT.len() + 3) as i32);
}

// ------------------------------------------------------------------ a sequence's state in memory and the options (0.9)

#[test]
fn a_sequences_bytes_are_its_file_and_load_into_a_new_session_to_draw_on_as_before() {
    let dir = Scratch::new("bytes");
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&STOP_PROMPT).unwrap();
    let first = decode_both(&mut session, TRUNCATE_STEPS);
    assert_ne!(first[0], first[1]);
    let saved = state_of(&session);
    let states: Vec<Vec<u8>> = (0..2)
        .map(|sequence| {
            let state = session.save_sequence_to_vec(sequence).unwrap();
            let path = dir.0.join(format!("sequence-{sequence}.safetensors"));
            session.save_sequence(sequence, &path).unwrap();
            // The bytes the file holds, byte for byte.
            assert!(state.len() > 8);
            assert!(state == std::fs::read(&path).unwrap(), "sequence {sequence}: the bytes are not the file's");
            state
        })
        .collect();
    assert_ne!(states[0], states[1]);
    // Asking again changes nothing, in the saving session or in the bytes.
    assert!(session.save_sequence_to_vec(0).unwrap() == states[0]);
    let mut restored = two_sequence_session(&model);
    restored.load_sequence_from_slice(0, &states[0]).unwrap();
    restored.load_sequence_from_slice(1, &states[1]).unwrap();
    // Each sequence holds what was saved, bit for bit, and the saving session is left as it was.
    assert_eq!(state_of(&restored), saved);
    assert_eq!(state_of(&session), saved);
    for s in 0..2 {
        assert_eq!(saved[s].0, [&STOP_PROMPT[..], &first[s]].concat(), "{s}");
        assert_eq!(restored.len(s as i32), saved[s].0.len() as i32);
        // The restored session's bytes are the saved ones: the whole state came across.
        assert!(restored.save_sequence_to_vec(s as i32).unwrap() == states[s], "{s}");
    }
    // Same seed, same sequence indices, and the saved counts of draws: both sequences draw on, sampled, exactly as
    // the saving session's do.
    assert_eq!(decode_both(&mut restored, TRUNCATE_STEPS), decode_both(&mut session, TRUNCATE_STEPS));
}

#[test]
fn a_state_loaded_from_any_slice_into_another_sequence_continues_as_the_saved_one() {
    let model = chat_model();
    let mut session = two_sequence_session(&model);
    session.prefill(&STOP_PROMPT).unwrap();
    let first = decode_both(&mut session, TRUNCATE_STEPS);
    assert_ne!(first[0], first[1]);
    let (source, logits) = (session.tokens(0).unwrap(), bits(&session.logits(0).unwrap()));
    let state = session.save_sequence_to_vec(0).unwrap();
    // The bytes as they came, and 3 bytes into another buffer: they need no alignment, and the offset must be kept.
    let shifted = [&[0u8; 3][..], &state[..]].concat();
    for data in [&state[..], &shifted[3..]] {
        // Sequence 1 goes its own way first: cut back to the prompt and given other tokens.
        session.truncate_sequence(1, STOP_PROMPT.len() as i32).unwrap();
        session.prefill_sequence(1, &[20, 21]).unwrap();
        assert_eq!(session.tokens(1).unwrap(), [&STOP_PROMPT[..], &[20, 21]].concat());
        assert_ne!(bits(&session.logits(1).unwrap()), logits);
        session.load_sequence_from_slice(1, data).unwrap();
        // The target holds the saved tokens and logits, bit for bit; the saved sequence is left as it was.
        assert_eq!(state_of(&session), [(source.clone(), logits.clone()), (source.clone(), logits.clone())]);
    }
    continues_as_the_saved_one(&mut session, &source);
}

#[test]
fn bad_bytes_are_the_librarys_errors_and_leave_the_sequences_as_they_were() {
    let model = chat_model();
    let (mut session, mut twin) = (two_sequence_session(&model), two_sequence_session(&model));
    for s in [&mut session, &mut twin] {
        s.prefill(&STOP_PROMPT).unwrap();
        decode_both(s, 3);
    }
    let data = session.save_sequence_to_vec(0).unwrap();
    let mut fp32 = two_sequence_session_with(&model, KvCache::Fp32);
    fp32.prefill(&STOP_PROMPT).unwrap();
    let other_cache = fp32.save_sequence_to_vec(0).unwrap();
    // The other way round too: a BF16 cache's bytes do not load into an FP32 cache.
    let error = fp32.load_sequence_from_slice(1, &data).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::SHAPE, "RESET_ERR_SHAPE"), "{error}");
    let mut short = model.session(STOP_PROMPT.len() as i32 + 2, 1).unwrap(); // the saved sequence holds 3 more
    let error = short.load_sequence_from_slice(0, &data).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::CONTEXT_OVERFLOW, "RESET_ERR_CONTEXT_OVERFLOW"), "{error}");
    let header_len = u64::from_le_bytes(data[..8].try_into().unwrap()) as usize;
    // A safetensors file, but no libreset sequence file.
    let not_a_sequence = std::fs::read(source().join("tests/fixtures/models/qwen3-tied/reference.safetensors"));
    let not_a_sequence = not_a_sequence.unwrap();
    let before = state_of(&session);
    assert_ne!(before[0].0, before[1].0);
    let (shape, format) = (Error::SHAPE, Error::FORMAT);
    // Cut in the length (nothing at all included), in the header, and before the last byte of the tensors.
    let mut refusals: Vec<(u32, i32, &[u8], &str)> = [0, 4, 8 + header_len / 2, data.len() - 1]
        .iter()
        .map(|&size| (format, 1, &data[..size], "truncated"))
        .collect();
    refusals.push((format, 1, &data[..data.len() - 1], "'<memory>'"));
    refusals.push((format, 1, &not_a_sequence, "not a valid libreset sequence file"));
    refusals.push((shape, 1, &other_cache, "a KV cache of fp32; this session has bf16"));
    refusals.extend([2, -1, i32::MAX, i32::MIN].map(|sequence| (Error::OUT_OF_RANGE, sequence, &data[..], "")));
    for (status, sequence, bad, message) in refusals {
        let error = session.load_sequence_from_slice(sequence, bad).unwrap_err();
        assert_eq!(error.status, status, "{} bytes, sequence {sequence}: {error}", bad.len());
        assert!(error.message.contains(message), "{error}");
    }
    for sequence in [2, -1, i32::MAX, i32::MIN] {
        let error = session.save_sequence_to_vec(sequence).unwrap_err();
        assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
    }
    // Every refusal left both sequences as they were, bit for bit, and they draw on as the twin's.
    assert_eq!(state_of(&session), before);
    assert!(session.save_sequence_to_vec(0).unwrap() == data);
    assert_eq!(decode_both(&mut session, TRUNCATE_STEPS), decode_both(&mut twin, TRUNCATE_STEPS));
}

#[test]
fn options_are_what_the_session_was_created_with_max_context_resolved() {
    let (tied, chat) = (model(), chat_model());
    // max_context 0 is min(the model's maximum, 4096): 512 for the tied fixture (its maximum), 4096 for the chat one.
    for (model, resolved) in [(&tied, 512), (&chat, 4096)] {
        let session = model.session(0, 1).unwrap();
        // The rest are reset.h's defaults, which SessionOptions::default() must be.
        let want = SessionOptions {
            max_context: resolved,
            sequences: 1,
            kv_cache: KvCache::Bf16,
            top_logprobs: 0,
            eager: false,
            prefill_gemm_tokens: 0,
            programmatic_launch: true,
        };
        assert_eq!(session.options().unwrap(), want);
        assert_eq!(session.max_context(), resolved);
    }
    // The CUDA backend's settings, none of them its default, are read back as given though the CPU backend
    // ignores them.
    let given = SessionOptions {
        max_context: 32,
        sequences: 3,
        kv_cache: KvCache::Fp8,
        top_logprobs: 5,
        eager: true,
        prefill_gemm_tokens: 64,
        programmatic_launch: false,
    };
    let mut session = tied.session_with(&given).unwrap();
    assert_eq!(session.options().unwrap(), given);
    // Nothing a session does changes them.
    session.prefill(&[3, 4, 5]).unwrap();
    session.step().unwrap();
    session.set_policy(&PolicyParams { kind: PolicyKind::Fixed, temperature: 1.0, seed: 1, ..PolicyParams::greedy() })
        .unwrap();
    session.reset().unwrap();
    assert_eq!(session.options().unwrap(), given);
    // Given to session_with, they make a session like this one.
    assert_eq!(tied.session_with(&session.options().unwrap()).unwrap().options().unwrap(), given);
    for options in [
        SessionOptions {
            max_context: 512,
            sequences: 8,
            kv_cache: KvCache::Fp32,
            top_logprobs: 20,
            eager: true,
            ..SessionOptions::default()
        },
        // -1: never the GEMM path.
        SessionOptions { max_context: 1, sequences: 2, prefill_gemm_tokens: -1, ..SessionOptions::default() },
    ] {
        assert_eq!(tied.session_with(&options).unwrap().options().unwrap(), options);
    }
    // Below -1 reaches the library as given, and its refusal names the value.
    let options = SessionOptions { prefill_gemm_tokens: -2, ..SessionOptions::default() };
    let error = tied.session_with(&options).err().expect("a prefill_gemm_tokens of -2 was taken");
    assert_eq!(error.status, Error::INVALID_ARGUMENT, "{error}");
    assert!(error.message.contains("prefill_gemm_tokens = -2"), "{error}");
}

// ------------------------------------------------------------------ the standalone policy's logit bias (0.7)

/// 64 distinct logits in [-3.2, 3.1] (37 is prime to 64, so i * 37 % 64 takes every value once): no ties.
fn policy_logits() -> Vec<f32> {
    (0..64).map(|i| ((i * 37) % 64) as f32 * 0.1 - 3.2).collect()
}

#[test]
fn a_policys_bias_bans_and_lifts_until_cleared_and_is_checked_against_each_row() {
    let logits = policy_logits();
    let mut order: Vec<i32> = (0..logits.len() as i32).collect();
    order.sort_by(|&a, &b| logits[b as usize].total_cmp(&logits[a as usize]));
    let (banned, lifted) = (order[0], order[2]);
    // Ban the argmax and lift the third most likely token by 5: it wins, where a binding that dropped the values
    // would draw the argmax, and one that dropped the +5 only the second.
    let bias = [(banned, f32::NEG_INFINITY), (lifted, 5.0)];
    assert_eq!(argmax(&biased(&logits, &bias)), lifted);
    let params = PolicyParams { kind: PolicyKind::Greedy, ..PolicyParams::reset(1.0, 0.3, 0.6, 4) };
    let mut policy = reset::Policy::new(&params, &[], &[], 0).unwrap();
    let raw = policy.decide(&logits).unwrap();
    policy.set_logit_bias(&bias).unwrap();
    let (token, decision) = policy.sample(&logits).unwrap();
    assert_eq!(token, lifted);
    // The entropy and the logprob are of the raw logits, not of the biased ones.
    assert_eq!(decision.entropy, raw.entropy);
    assert!((f64::from(decision.logprob) - raw_logprob(&logits, lifted)).abs() <= LOGPROB_TOLERANCE, "{decision:?}");
    // It stays through set_params and reset.
    policy.set_params(&params).unwrap();
    policy.reset().unwrap();
    assert_eq!(policy.sample(&logits).unwrap().0, lifted);
    // With no vocabulary, each row is checked: one too short to hold a listed token is refused.
    let error = policy.sample(&logits[..lifted.max(banned) as usize]).unwrap_err();
    assert_eq!((error.status, error.name.as_str()), (Error::OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"), "{error}");
    // A refused bias keeps the one in force.
    assert_eq!(policy.set_logit_bias(&[(5, f32::NAN)]).unwrap_err().status, Error::INVALID_ARGUMENT);
    assert_eq!(policy.set_logit_bias(&[(-1, 1.0)]).unwrap_err().status, Error::OUT_OF_RANGE);
    assert_eq!(policy.sample(&logits).unwrap().0, lifted);
    // Cleared, by clear_logit_bias or an empty slice, the raw argmax is drawn again.
    policy.clear_logit_bias().unwrap();
    assert_eq!(policy.sample(&logits).unwrap().0, banned);
    policy.set_logit_bias(&bias).unwrap();
    policy.set_logit_bias(&[]).unwrap();
    assert_eq!(policy.sample(&logits).unwrap().0, banned);
}

#[test]
fn a_large_bias_makes_every_policy_draw_its_token_and_cleared_the_draws_are_a_plain_policys() {
    let logits = policy_logits();
    // The least likely token, and T = 1 over every token, seeded: the draws are keyed by seed and the count of
    // accepted tokens.
    let forced = argmax(&logits.iter().map(|z| -z).collect::<Vec<f32>>());
    let params = PolicyParams { kind: PolicyKind::Fixed, temperature: 1.0, seed: 9, ..PolicyParams::greedy() };
    let draws = |policy: &mut reset::Policy| -> Vec<i32> {
        (0..BIAS_STEPS)
            .map(|_| {
                let token = policy.sample(&logits).unwrap().0;
                policy.accept(token).unwrap();
                token
            })
            .collect()
    };
    let want = draws(&mut reset::Policy::new(&params, &[], &[], 0).unwrap());
    assert!(want.iter().any(|&t| t != want[0]) && !want.contains(&forced), "{want:?}");
    let mut policy = reset::Policy::new(&params, &[], &[], 0).unwrap();
    policy.set_logit_bias(&[(forced, 100.0)]).unwrap();
    assert_eq!(draws(&mut policy), vec![forced; BIAS_STEPS]);
    policy.clear_logit_bias().unwrap();
    policy.reset().unwrap();
    assert_eq!(draws(&mut policy), want);
}

/// The fixture's plain greedy continuation repeats a token in its first 20; a frequency penalty of 2 does not.
#[test]
fn a_frequency_penalty_stops_greedy_repeating() {
    let model = model();
    let run = |frequency_penalty: f32| -> Vec<i32> {
        let mut session = model.session(128, 1).unwrap();
        session.set_policy(&PolicyParams { frequency_penalty, ..PolicyParams::greedy() }).unwrap();
        session.prefill(&ids("prompt.txt")).unwrap();
        session.generate(20).map(|s| s.unwrap().token).collect()
    };
    let most_repeats = |tokens: &[i32]| tokens.iter().map(|t| tokens.iter().filter(|u| *u == t).count()).max();
    let (plain, penalised) = (run(0.0), run(2.0));
    assert_eq!(plain.len(), penalised.len(), "{plain:?} vs {penalised:?}");
    assert_ne!(plain, penalised);
    assert!(most_repeats(&penalised) < most_repeats(&plain), "{plain:?} vs {penalised:?}");
}

#[test]
fn cancel_from_another_thread_stops_decoding() {
    let model = model();
    let mut session = model.session(512, 1).unwrap();
    session.prefill(&[3; 8]).unwrap();
    let canceller = session.canceller();
    // reset drops a request no call has consumed, so the refill below must not
    // run between the cancel and the call that takes it: both hold the lock,
    // and the loop refills only while no cancel was sent.
    let cancel_sent = std::sync::Mutex::new(false);
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            let mut sent = cancel_sent.lock().unwrap();
            canceller.cancel().unwrap();
            *sent = true;
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if Instant::now() > deadline {
                break Ok(());
            }
            if session.len(0) > 500 {
                let refill = {
                    let sent = cancel_sent.lock().unwrap();
                    if !*sent {
                        session.reset().unwrap();
                    }
                    !*sent
                };
                // The cancel may land in this refill as well as in a step.
                if refill {
                    if let Err(e) = session.prefill(&[3; 8]) {
                        break Err(e);
                    }
                }
            }
            if let Err(e) = session.step() {
                break Err(e);
            }
        }
    });
    assert_eq!(result.unwrap_err().status, Error::CANCELLED);
}

/// A real tokenizer of ../shared/data/tokenizers, or None (the test then skips, saying so).
fn shared_tokenizer(name: &str) -> Option<Tokenizer> {
    let dir = source().join("../shared/data/tokenizers").join(name);
    if !dir.join("tokenizer.json").exists() {
        eprintln!("SKIPPED: {} missing", dir.display());
        return None;
    }
    Some(Tokenizer::load(&dir).unwrap())
}

#[test]
fn tokenize_and_chat_format_with_the_qwen3_tokenizer() {
    let tokenizer = match shared_tokenizer("qwen3") {
        Some(t) => t,
        None => return,
    };
    let ids = tokenizer.encode("Hello, world! <|im_end|>", true).unwrap();
    assert_eq!(tokenizer.decode(&ids, false).unwrap(), "Hello, world! <|im_end|>");
    let prompt = tokenizer
        .chat_format(&[Message::new("user", "2+2?")], &reset::ChatOptions::default())
        .unwrap();
    assert_eq!(prompt, "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
}

/// The tool-calling cases of tests/text/chat_reference.json (transformers' rendering), as
/// tests/bindings/tool_cases.py writes them for a test without a JSON reader: NUL-separated fields.
fn tool_cases() -> Vec<Vec<String>> {
    let dir = PathBuf::from(std::env::var("RESET_TOOL_CASES").expect("RESET_TOOL_CASES: run through ctest"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().map(|f| std::fs::read_to_string(f).unwrap().split('\0').map(String::from).collect()).collect()
}

#[test]
fn chat_format_renders_tools_as_transformers_does() {
    let tokenizer = match shared_tokenizer("qwen3") {
        Some(t) => t,
        None => return,
    };
    let cases = tool_cases();
    assert_eq!(cases.len(), 16, "4 tool conversations x generation prompt x thinking");
    for case in &cases {
        let n: usize = case[3].parse().unwrap();
        assert_eq!(case.len(), 4 + 3 * n + 1);
        let messages: Vec<Message> = (0..n)
            .map(|i| {
                let (role, content, calls) = (&case[4 + 3 * i], &case[5 + 3 * i], &case[6 + 3 * i]);
                if calls.is_empty() {
                    Message::new(role, content)
                } else {
                    Message::with_tool_calls(role, content, calls)
                }
            })
            .collect();
        let options = reset::ChatOptions {
            add_generation_prompt: case[0] == "1",
            enable_thinking: case[1] == "1",
            tools: (!case[2].is_empty()).then(|| case[2].clone()),
            ..Default::default()
        };
        assert_eq!(tokenizer.chat_format(&messages, &options).unwrap(), case[4 + 3 * n], "{:?}", &case[..4]);
    }
}

#[test]
fn chat_format_refuses_bad_tools_clearly() {
    let (qwen3, llama3) = match (shared_tokenizer("qwen3"), shared_tokenizer("llama3")) {
        (Some(q), Some(l)) => (q, l),
        _ => return,
    };
    let tools = r#"[{"type": "function", "function": {"name": "get_weather"}}]"#;
    let call = r#"[{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]"#;
    let user = Message::new("user", "Weather in Paris?");
    let with_tools = |t: &str| reset::ChatOptions { tools: Some(t.to_string()), ..Default::default() };
    let plain = reset::ChatOptions::default();
    let cases: [(&str, &Tokenizer, Vec<Message>, &reset::ChatOptions, u32, &str); 7] = [
        ("tools where the template has none", &llama3, vec![user.clone()], &with_tools(tools), Error::UNSUPPORTED,
         "tools"),
        ("a call where the template has none", &llama3,
         vec![user.clone(), Message::with_tool_calls("assistant", "", call)], &plain, Error::UNSUPPORTED, "tool"),
        ("tools that are not JSON", &qwen3, vec![user.clone()], &with_tools(r#"[{"type": "function","#),
         Error::INVALID_ARGUMENT, "tools_json"),
        ("a call without arguments", &qwen3,
         vec![user.clone(), Message::with_tool_calls("assistant", "", r#"[{"function": {"name": "f"}}]"#)], &plain,
         Error::INVALID_ARGUMENT, r#"tool_calls_json[1][0] has no "arguments""#),
        ("a call on a user message", &qwen3, vec![Message::with_tool_calls("user", "hi", call)], &plain,
         Error::INVALID_ARGUMENT, "tool_calls_json[0]"),
        ("a NUL in the tools", &qwen3, vec![user.clone()], &with_tools("[]\0"), Error::INVALID_ARGUMENT, "the tools"),
        ("a NUL in a call", &qwen3, vec![user.clone(), Message::with_tool_calls("assistant", "", "[]\0")], &plain,
         Error::INVALID_ARGUMENT, "tool calls"),
    ];
    for (name, tokenizer, messages, options, status, words) in cases {
        let error = tokenizer.chat_format(&messages, options).unwrap_err();
        assert!(error.status == status && error.message.contains(words), "{name}: {error}");
    }
    // "null" and "[]" are none.
    let answer = Message::new("assistant", "ok");
    let want = qwen3.chat_format(&[user.clone(), answer.clone()], &plain).unwrap();
    for none in ["null", "[]"] {
        let messages = [user.clone(), Message::with_tool_calls("assistant", "ok", none)];
        assert_eq!(qwen3.chat_format(&messages, &with_tools(none)).unwrap(), want, "{none}");
    }
}

fn rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_thousand_create_free_cycles_keep_memory_flat() {
    let model = model();
    let cycle = || {
        let mut session = model.session(64, 1).unwrap();
        session.prefill(&[1, 2, 3]).unwrap();
        drop(reset::Policy::new(&PolicyParams::reset(1.0, 0.3, 0.6, 32), &[5], &[6], 0).unwrap());
        assert!(Model::load("/nonexistent/model", &ModelOptions::default()).is_err());
    };
    (0..100).for_each(|_| cycle()); // warm the allocator's pools first
    let before = rss_kib();
    (0..1000).for_each(|_| cycle());
    let grown = rss_kib() - before;
    // A leaked session (its KV cache) or model would grow RSS far past this; small leaks are
    // the C test's job, under valgrind.
    assert!(grown < 4096, "RSS grew by {grown} KiB over 1,000 cycles");
}

/// A fresh directory under the system's temporary one, removed by the caller.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reset-rust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn a_non_utf8_path_reaches_the_library_as_itself() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch_dir("paths");
    // Links whose names are not UTF-8: a lossy conversion would ask for "model-\u{fffd}" instead.
    let model_link = dir.join(OsStr::from_bytes(b"model-\xff"));
    std::os::unix::fs::symlink(source().join("tests/fixtures/models/qwen3-tied").canonicalize().unwrap(), &model_link)
        .unwrap();
    let tokenizer_link = dir.join(OsStr::from_bytes(b"tokenizer-\xfe"));
    std::os::unix::fs::symlink(source().join("models/reset-arith-4m").canonicalize().unwrap(), &tokenizer_link)
        .unwrap();
    let options = ModelOptions { weights: Weights::Bf16, backend: Backend::Cpu, ..ModelOptions::default() };
    let model = Model::load(&model_link, &options);
    let tokenizer = Tokenizer::load(&tokenizer_link);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(model.expect("model through a non-UTF-8 path").info().unwrap().architecture, "qwen3");
    assert!(!tokenizer.expect("tokenizer through a non-UTF-8 path").encode("1+2", false).unwrap().is_empty());
}

#[test]
fn a_nul_in_a_path_is_refused_not_truncated() {
    let path = source().join("tests/fixtures/models/qwen3-tied\0/does/not/exist");
    let error = Model::load(&path, &ModelOptions::default()).err().expect("a path cut at its NUL loaded");
    assert_eq!(error.status, Error::INVALID_ARGUMENT);
    let error =
        Tokenizer::load(source().join("models/reset-arith-4m\0/x")).err().expect("a path cut at its NUL loaded");
    assert_eq!(error.status, Error::INVALID_ARGUMENT);
}
