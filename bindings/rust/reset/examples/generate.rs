//! Generate from a model directory: cargo run --example generate -- MODEL_DIR [IDS...]
//! (the fixture models have no tokenizer: the ids are printed, and the text when there is one).
fn main() -> Result<(), reset::Error> {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: generate MODEL_DIR [PROMPT_IDS...]");
    let mut prompt: Vec<i32> = args.map(|a| a.parse().expect("prompt ids are integers")).collect();
    if prompt.is_empty() {
        prompt = vec![1, 2, 3];
    }
    let model = reset::Model::load(&path, &reset::ModelOptions::default())?;
    let mut session = model.session(256, 1)?;
    session.set_policy(&reset::PolicyParams::greedy())?;
    session.prefill(&prompt)?;
    for step in session.generate(32) {
        let step = step?;
        println!("{:6} {:>8.4} {:?}", step.token, step.entropy, step.text);
    }
    Ok(())
}
