//! `retrieval tune`: fine-tune MiniLM itself on (question, tool) pairs, on
//! heads train's split, and write the weights `[retrieval] minilm_weights`
//! names.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::Result;

use switchyard::config::Config;
use switchyard::dense::minilm::MiniLm;
use switchyard::lab::heads::Hooks;
use switchyard::lab::heads::tune::tune_and_validate;
use switchyard::lab::minilm_tune::TuneOptions;
use switchyard::lab::train::{TrainOptions, TrainProgress};
use switchyard::retrieve::embed::EmbedError;

use super::heads::split::SplitArgs;
use crate::cli::progress::bar;

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    split: SplitArgs,
    #[arg(long, default_value_t = TuneOptions::default().epochs)]
    epochs: usize,
    #[arg(long, default_value_t = TuneOptions::default().batch)]
    batch: usize,
    #[arg(long, default_value_t = TuneOptions::default().lr)]
    lr: f64,
    #[arg(long, default_value_t = TuneOptions::default().temperature)]
    temperature: f64,
    #[arg(long, default_value = "minilm-tuned.safetensors")]
    out: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Progress bars on stderr; tuning embeds with the model it trains, so
/// nothing comes from the vector cache.
struct Bars(Option<indicatif::ProgressBar>);

impl Hooks for Bars {
    fn embed(&mut self, _: &[String], what: &str) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::Compute(format!("tuning embeds {what} with the model it trains")))
    }
    fn start(&mut self, what: &str, steps: usize) {
        self.0 = Some(bar(steps as u64, what));
    }
    fn step(&mut self, what: &str, p: &TrainProgress) {
        let Some(bar) = &self.0 else { return };
        bar.set_position(p.step as u64);
        if let Some(m) = p.validation {
            bar.set_message(format!("{what} (epoch {}: validation top-1 {:.1}%)", p.epoch, 100.0 * m.top1));
        }
    }
    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

pub(super) fn tune(config: &Config, a: TuneArgs) -> Result<ExitCode> {
    let plan = a.split.plan(TrainOptions::default());
    let prepared = plan.prepare()?;
    let opts = TuneOptions {
        epochs: a.epochs,
        batch: a.batch,
        lr: a.lr,
        temperature: a.temperature,
        ..TuneOptions::default()
    };
    let dir = MiniLm::folder(&config.data_dir()?);
    let o = tune_and_validate(prepared, &dir, &opts, &mut Bars(None))?;
    o.model.save(&a.out)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&o.json(&a.out))?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", o.text());
    println!(
        "\nsaved {} (use it: [retrieval] embedder = \"minilm\", minilm_weights = \"{}\")",
        a.out.display(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
