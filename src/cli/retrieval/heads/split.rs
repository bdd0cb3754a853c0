//! The split `heads train` and `retrieval tune` share: the same flags hold
//! out the same tools, so a tuned MiniLM and the heads trained on it are
//! judged on tools neither saw.

use std::path::PathBuf;

use clap::Args;

use switchyard::lab::heads::{HeadsPlan, NegativesFrom, ToolText};
use switchyard::lab::train::TrainOptions;

/// The pool, the training file and which of its tools are held out or
/// validate: what every trainer on this split reads.
#[derive(Args, Debug)]
pub(crate) struct ToolSplitArgs {
    /// The tool pool (tool.json); every test question is ranked against all of it.
    #[arg(long)]
    tools: PathBuf,
    /// Training examples: annotated call texts (text, start_str_idx, tool_calling) or questions with `tool`.
    #[arg(long)]
    train: PathBuf,
    /// Share of the training file's tools kept out of training entirely (the unseen tools).
    #[arg(long, default_value_t = 0.2)]
    holdout: f64,
    /// Share of the remaining tools whose examples choose the epoch (and the blend weight).
    #[arg(long, default_value_t = 0.2)]
    validation: f64,
    /// The split's seed (and training's).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl ToolSplitArgs {
    /// The plan for this split with the default tool text, testing nothing,
    /// dumping nothing, mining negatives anywhere and choosing the blend on
    /// validation.
    pub(crate) fn plan(&self, options: TrainOptions) -> HeadsPlan {
        HeadsPlan {
            tools: self.tools.clone(),
            train: self.train.clone(),
            test: None,
            synthetic: None,
            holdout: self.holdout,
            validation: self.validation,
            tool_text: ToolText::Text,
            negatives_from: NegativesFrom::Any,
            lexical_weight: None,
            no_refit: false,
            dump_validation: None,
            dump_test: None,
            options: TrainOptions { seed: self.seed, ..options },
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct SplitArgs {
    #[command(flatten)]
    split: ToolSplitArgs,
    /// Synthetic questions (`retrieval synth`), trained on for every tool they name, held out or not.
    #[arg(long)]
    synthetic: Option<PathBuf>,
    /// What a tool's text is: text (id words and description), description, or phrase (a path id
    /// as its relation of its subject, then the description).
    #[arg(long, default_value = "text", value_parser = ["text", "description", "phrase"])]
    tool_text: String,
    /// Keep what was trained without the validation tools instead of training again on them.
    #[arg(long)]
    no_refit: bool,
}

impl SplitArgs {
    /// The plan for this split, testing nothing, dumping nothing, mining
    /// negatives anywhere and choosing the blend on validation.
    pub(crate) fn plan(&self, options: TrainOptions) -> HeadsPlan {
        HeadsPlan {
            synthetic: self.synthetic.clone(),
            tool_text: match self.tool_text.as_str() {
                "text" => ToolText::Text,
                "phrase" => ToolText::Phrase,
                _ => ToolText::Description,
            },
            no_refit: self.no_refit,
            ..self.split.plan(options)
        }
    }
}
