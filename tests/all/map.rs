//! The map cannot drift from the territory: every crate and its modules
//! are in ARCHITECTURE.md's layer table, every test binary and bench in
//! CONTRIBUTING.md, every script in `scripts/README.md`. A new one is
//! placed on purpose; a name that no longer exists is a stale line.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The modules a crate root declares (`pub mod x;`, `mod x;`), not those
/// only compiled for its tests.
fn declared_modules(lib: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_only = false;
    for line in lib.lines().map(str::trim) {
        if line.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let decl = line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod "));
        if let Some(m) = decl.and_then(|d| d.strip_suffix(';'))
            && !std::mem::take(&mut test_only)
        {
            out.push(m.to_string());
        }
        test_only &= line.starts_with("#[");
    }
    out
}

/// ARCHITECTURE.md's layer table: crate → its modules column.
fn layer_table(arch: &str) -> Vec<(String, String)> {
    arch.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let krate = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            krate.starts_with("switchyard").then(|| (krate.to_string(), cells.get(3).unwrap_or(&"").to_string()))
        })
        .collect()
}

#[test]
fn every_crate_and_module_is_in_the_architecture() {
    let arch = read("ARCHITECTURE.md");
    let table = layer_table(&arch);
    let mut missing = Vec::new();
    let mut crates: Vec<(String, PathBuf)> = vec![("switchyard".into(), root().join("src"))];
    for dir in entries(&root().join("crates")).into_iter().filter(|d| d.is_dir()) {
        let manifest: toml::Table = toml::from_str(&read(&format!("crates/{}/Cargo.toml", name(&dir)))).unwrap();
        crates.push((manifest["package"]["name"].as_str().unwrap().to_string(), dir.join("src")));
        if !arch.contains(&format!("crates/{}/src/", name(&dir))) {
            missing.push(format!("ARCHITECTURE.md: the tree names no crates/{}/src/", name(&dir)));
        }
    }
    for (krate, src) in &crates {
        let Some((_, modules)) = table.iter().find(|(k, _)| k == krate) else {
            missing.push(format!("ARCHITECTURE.md: the layer table has no row for {krate}"));
            continue;
        };
        // A flat crate is its own module: the row says so.
        if modules == "(flat)" {
            continue;
        }
        let root_file = if src.join("lib.rs").exists() && krate != "switchyard" { "lib.rs" } else { "main.rs" };
        let declared = declared_modules(&std::fs::read_to_string(src.join(root_file)).unwrap());
        for m in &declared {
            if !modules.contains(&format!("`{m}`")) {
                missing.push(format!("ARCHITECTURE.md: {krate}'s row does not name its module `{m}`"));
            }
        }
        for listed in modules.split('`').skip(1).step_by(2) {
            if !declared.iter().any(|m| m == listed) {
                missing.push(format!("ARCHITECTURE.md: {krate}'s row names `{listed}`, which it does not declare"));
            }
        }
    }
    for (krate, _) in &table {
        if !crates.iter().any(|(k, _)| k == krate) {
            missing.push(format!("ARCHITECTURE.md: the layer table names {krate}, which is no crate"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_test_binary_and_bench_is_in_contributing() {
    let contributing = read("CONTRIBUTING.md");
    let mut missing = Vec::new();
    for p in entries(&root().join("tests")) {
        let n = name(&p);
        let named = if p.is_dir() {
            !p.join("main.rs").exists() || contributing.contains(&format!("`tests/{n}/`"))
        } else {
            !n.ends_with(".rs") || contributing.contains(&format!("`tests/{n}`"))
        };
        if !named {
            missing.push(format!("CONTRIBUTING.md names no test binary tests/{n}"));
        }
    }
    for p in entries(&root().join("benches")).into_iter().filter(|p| p.is_file()) {
        let bench = name(&p).trim_end_matches(".rs").to_string();
        if !contributing.contains(&format!("cargo bench --bench {bench} ")) {
            missing.push(format!("CONTRIBUTING.md names no `cargo bench --bench {bench}`"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_script_is_in_the_scripts_index() {
    let index = read("scripts/README.md");
    let mut missing = Vec::new();
    for p in entries(&root().join("scripts")) {
        let n = name(&p);
        if p.is_dir() {
            for f in entries(&p) {
                let rel = format!("{n}/{}", name(&f));
                if !index.contains(&format!("`{rel}`")) && !index.contains(&format!("`{n}/")) {
                    missing.push(format!("scripts/README.md names neither {rel} nor its folder"));
                }
            }
        } else if n != "README.md" && !index.contains(&format!("`{n}`")) {
            missing.push(format!("scripts/README.md names no {n}"));
        }
    }
    // And names nothing that is gone.
    for cell in index.split('`').skip(1).step_by(2) {
        let script = cell.split_whitespace().next().unwrap_or_default();
        let looks_like_file = script.ends_with(".sh") || script.ends_with(".py") || script.ends_with(".txt");
        if looks_like_file && !root().join("scripts").join(script).exists() {
            missing.push(format!("scripts/README.md names {script}, which is not in scripts/"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
