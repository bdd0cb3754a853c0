//! The library of a run from its sources: TOML manifests, folders of them,
//! and JSON files read by content (an OpenAPI 3 document or a list of
//! OpenAI function schemas), with the config's options for each JSON file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::file_options::FileOptions;
use super::manifest::{self, ManifestError, Reading, manifest_dir};
use super::{ToolLibrary, ToolSpec, functions, openapi};

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// An object that names its OpenAPI or Swagger version, or holds `paths`,
/// is an API description; anything else is taken for a function list.
fn is_openapi(doc: &Value) -> bool {
    ["openapi", "swagger", "paths"].iter().any(|k| doc.get(k).is_some())
}

/// Loads one JSON library file.
pub fn load_json(path: &Path, options: &FileOptions) -> Result<Vec<ToolSpec>, ManifestError> {
    // A file with anything wrong is read again, precisely, for the error
    // (see `Reading`).
    read_json(path, options, Reading::Fast).or_else(|_| read_json(path, options, Reading::Precise))
}

fn read_json(path: &Path, options: &FileOptions, reading: Reading) -> Result<Vec<ToolSpec>, ManifestError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ManifestError::Io { path: path.to_path_buf(), source })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| ManifestError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let dir = manifest_dir(path);
    if is_openapi(&doc) {
        openapi::tools(&doc, path, options, &dir, reading)
    } else {
        functions::tools(doc, path, options, &dir, reading)
    }
}

/// Checks that each options entry is for a JSON file of the library, once.
fn check_options(paths: &[PathBuf], options: &[FileOptions]) -> Result<(), ManifestError> {
    for (i, o) in options.iter().enumerate() {
        let refuse = |message: &str| ManifestError::File {
            path: o.path.clone(),
            field: format!("library_options[{i}].path"),
            message: message.to_string(),
        };
        if !paths.contains(&o.path) {
            return Err(refuse("is not listed in `library`"));
        }
        if !is_json(&o.path) {
            return Err(refuse("options are for .json library files (OpenAPI or OpenAI functions)"));
        }
        if options[..i].iter().any(|p| p.path == o.path) {
            return Err(refuse("has options twice"));
        }
    }
    Ok(())
}

/// Loads every source into one library. A folder gives its `*.toml`
/// manifests in name order (not recursively); a `.json` file is read by
/// content. A tool name defined twice, in any sources, is refused.
pub fn load_library(paths: &[PathBuf], options: &[FileOptions]) -> Result<ToolLibrary, ManifestError> {
    check_options(paths, options)?;
    let default = FileOptions::default();
    let mut units = Vec::new();
    for path in paths {
        if path.is_file() && is_json(path) {
            let opts = options.iter().find(|o| o.path == *path).unwrap_or(&default);
            units.push(Ok(Unit::Json(path, opts)));
        } else {
            match manifest::manifest_files(path) {
                Ok(files) => units.extend(files.into_iter().map(|f| Ok(Unit::Toml(f)))),
                // Reported in its place, after any error of the sources before it.
                Err(e) => units.push(Err(e)),
            }
        }
    }
    let mut tools = Vec::new();
    for result in read_all(units) {
        tools.extend(result?);
    }
    ToolLibrary::new(tools)
}

/// One file of the library.
enum Unit<'a> {
    Toml(PathBuf),
    Json(&'a Path, &'a FileOptions),
}

impl Unit<'_> {
    fn path(&self) -> &Path {
        match self {
            Unit::Toml(p) => p,
            Unit::Json(p, _) => p,
        }
    }

    fn read(&self) -> Result<Vec<ToolSpec>, ManifestError> {
        match self {
            Unit::Toml(p) => manifest::load_file(p),
            Unit::Json(p, o) => load_json(p, o),
        }
    }
}

/// Reads the files on as many threads as there are cores (this one among
/// them), biggest first so that none is left alone with a big file at the
/// end (a large library is a few big files and many small ones); the
/// results come back in the files' order, so the first error is the one
/// reading them one by one would meet.
fn read_all(units: Vec<Result<Unit, ManifestError>>) -> Vec<Result<Vec<ToolSpec>, ManifestError>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(units.len());
    if threads <= 1 {
        return units.into_iter().map(|u| u.and_then(|u| u.read())).collect();
    }
    let size =
        |u: &Result<Unit, _>| u.as_ref().ok().and_then(|u| std::fs::metadata(u.path()).ok()).map_or(0, |m| m.len());
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(&units[i])));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            if let Ok(unit) = &units[i] {
                done.push((i, unit.read()));
            }
        }
        done
    };
    let mut results: Vec<Option<Result<Vec<ToolSpec>, ManifestError>>> = Vec::new();
    results.resize_with(units.len(), || None);
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for helper in helpers {
            match helper.join() {
                Ok(d) => done.extend(d),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done.into_iter().for_each(|(i, r)| results[i] = Some(r));
    });
    release_freed_memory();
    units
        .into_iter()
        .zip(results)
        .map(|(unit, read)| unit.and_then(|_| read.unwrap_or_else(|| Ok(Vec::new()))))
        .collect()
}

/// glibc gives each thread that allocates an arena of its own, and keeps
/// what is freed there: the helpers' parsed documents (tens of MB at 16,000
/// tools) would stay in the process for good, as nothing else allocates in
/// those arenas. Handing the free pages back costs a few milliseconds.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}
