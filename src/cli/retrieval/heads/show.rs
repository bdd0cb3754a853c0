//! `heads show`: a trained heads or judge file's embedder, sizes and
//! training summary.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::Result;
use serde_json::json;

use switchyard::retrieve::cotools::{Heads, Judge};

pub(super) fn show(file: &Path, n: usize, json: bool) -> Result<ExitCode> {
    let heads = match Heads::load(file) {
        Ok(h) => h,
        Err(heads_err) => match Judge::load(file) {
            Ok(j) => return show_judge(&j, file, json),
            Err(_) => return Err(heads_err.into()),
        },
    };
    let summary: serde_json::Value = serde_json::from_str(heads.summary()).unwrap_or(json!(heads.summary()));
    let dims = heads.top_dims(n);
    if json {
        let dims: Vec<_> = dims.iter().map(|(d, w)| json!({"dimension": d, "w_dim": w})).collect();
        let out = json!({"file": file.display().to_string(), "kind": "heads", "embedder": heads.embedder(), "dim": heads.dim(), "hidden": heads.hidden(), "summary": summary, "top_dims": dims});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: CoTools heads for {} ({} dims, hidden size {})",
        file.display(),
        heads.embedder(),
        heads.dim(),
        heads.hidden()
    );
    println!("training: {}", serde_json::to_string_pretty(&summary)?);
    println!("\nthe {} largest |W_dim| (initialised at 1):\n{:>9}  {:>8}", dims.len(), "dimension", "W_dim");
    for (d, w) in dims {
        println!("{d:>9}  {w:>8.4}");
    }
    Ok(ExitCode::SUCCESS)
}

fn show_judge(j: &Judge, file: &Path, json: bool) -> Result<ExitCode> {
    let summary: serde_json::Value = serde_json::from_str(j.summary()).unwrap_or(json!(j.summary()));
    if json {
        let out = json!({"file": file.display().to_string(), "kind": "judge", "embedder": j.embedder(), "dim": j.dim(), "hidden": j.hidden(), "threshold": j.threshold(), "summary": summary});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{}: CoTools tool judge for {} ({} dims, hidden size {}), threshold {:.3}",
            file.display(),
            j.embedder(),
            j.dim(),
            j.hidden(),
            j.threshold()
        );
        println!("training: {}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(ExitCode::SUCCESS)
}
