//! OpenTelemetry on the command line: `--otlp URL` and `--otel-content` for
//! a live session, and `trace export FILE --otlp URL` for a recorded one.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr};

use switchyard::otel::{OtelConfig, OtelSettings, export_trace};

// Flattened into the session flags of `run` and `ui`.
#[derive(Args, Debug, Default)]
pub(super) struct OtelArgs {
    /// Export the session live as OpenTelemetry spans to this OTLP/HTTP receiver
    /// (a base URL such as http://127.0.0.1:6006, or its /v1/traces URL); over the config's [otel].
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Put message, tool argument and result content in the exported spans (off by default).
    #[arg(long)]
    otel_content: bool,
}

impl OtelArgs {
    pub(super) fn config(&self) -> OtelConfig {
        OtelConfig { endpoint: self.otlp.clone(), content: self.otel_content }
    }
}

#[derive(Args, Debug)]
pub(super) struct ExportArgs {
    /// A trace written by `run --trace` or by the workbench.
    file: PathBuf,
    /// The OTLP/HTTP receiver: a base URL (/v1/traces is added) or the traces URL.
    #[arg(long, value_name = "URL")]
    otlp: String,
    /// Put message, tool argument and result content in the spans.
    #[arg(long)]
    content: bool,
}

pub(super) fn export(a: ExportArgs) -> Result<ExitCode> {
    let settings = OtelSettings::new(&a.otlp, a.content)?;
    let sent = export_trace(&a.file, &settings).wrap_err_with(|| format!("trace export {}", a.file.display()))?;
    if let Some(torn) = sent.torn {
        eprintln!("warning: {}: {torn}", a.file.display());
    }
    println!("exported {} spans of {} to {} (trace id {})", sent.spans, a.file.display(), sent.url, sent.trace_id);
    Ok(ExitCode::SUCCESS)
}
