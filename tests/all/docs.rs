//! The book's reference pages, kept true by the code: `docs/src/keys.md`
//! holds the help dialog's rows, and `docs/src/config.md` names every key
//! the config file accepts, table by table.
//!
//! `SWITCHYARD_BLESS_DOCS=1 cargo test --test all docs::` rewrites the
//! generated block of `keys.md` instead of comparing it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use switchyard::config::Config;
use switchyard::model::Role;
use switchyard::model::price::Price;
use switchyard::tool::{FileOptions, HeaderValue};
use switchyard::ui::dialog::keys_markdown;

fn page(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src").join(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const KEYS_START: &str = "<!-- keys: generated from crates/ui/src/dialog/help.rs; SWITCHYARD_BLESS_DOCS=1 cargo test --test all docs:: rewrites it -->\n";
const KEYS_END: &str = "<!-- /keys -->";

#[test]
fn keys_page_is_the_help_dialogs_rows() {
    let path = page("keys.md");
    let text = read(&path);
    let (head, rest) =
        text.split_once(KEYS_START).unwrap_or_else(|| panic!("{} lacks the line {KEYS_START}", path.display()));
    let (block, tail) =
        rest.split_once(KEYS_END).unwrap_or_else(|| panic!("{} lacks the line {KEYS_END}", path.display()));
    let want = keys_markdown();
    if std::env::var("SWITCHYARD_BLESS_DOCS").is_ok_and(|v| v == "1") {
        if block != want {
            std::fs::write(&path, format!("{head}{KEYS_START}{want}{KEYS_END}{tail}")).unwrap();
        }
        return;
    }
    assert!(
        block == want,
        "{}'s generated block is not the help dialog's rows; \
         SWITCHYARD_BLESS_DOCS=1 cargo test --test all docs:: rewrites it.\n--- in the file\n{block}\n--- from help.rs\n{want}",
        path.display()
    );
}

#[test]
fn keys_markdown_has_a_table_per_section() {
    let md = keys_markdown();
    assert!(md.starts_with("In live mode") && md.contains("in a replay"), "{md}");
    for heading in ["Run", "Replay", "View", "In a dialog"] {
        assert!(md.contains(&format!("\n## {heading}\n\n| key | what it does |\n|---|---|\n")), "{heading}:\n{md}");
    }
    assert!(md.contains("| `space` | pause / resume |"), "{md}");
    assert!(md.contains("| `?` | this help |"), "{md}");
}

/// `docs/src/config.md`, cut into its `##` sections by heading.
struct ConfigPage {
    sections: Vec<(String, String)>,
}

impl ConfigPage {
    fn read() -> Self {
        let text = read(&page("config.md"));
        let mut sections: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            match line.strip_prefix("## ") {
                Some(heading) => sections.push((heading.trim().to_string(), String::new())),
                None => {
                    if let Some((_, body)) = sections.last_mut() {
                        body.push_str(line);
                        body.push('\n');
                    }
                }
            }
        }
        ConfigPage { sections }
    }

    fn section(&self, heading: &str) -> &str {
        let mut found = self.sections.iter().filter(|(h, _)| h == heading);
        let (_, body) = found.next().unwrap_or_else(|| panic!("config.md has no section `## {heading}`"));
        assert!(found.next().is_none(), "config.md has two sections `## {heading}`");
        body
    }

    /// The keys a section's table rows start with: `| `key` | …`.
    fn rows(&self, heading: &str) -> BTreeSet<String> {
        self.section(heading)
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(k, _)| k.to_string()))
            .collect()
    }

    /// Every key in `keys` has a row in the section, and every row is one
    /// of `keys` or of `also` (keys the code reads outside the struct, as
    /// the `kind` tag of a model).
    fn check(&self, heading: &str, keys: &BTreeSet<String>, also: &[&str]) {
        assert!(!keys.is_empty(), "`## {heading}`: the code gave no keys to check");
        let rows = self.rows(heading);
        let missing: Vec<&String> = keys.iter().filter(|k| !rows.contains(*k)).collect();
        assert!(missing.is_empty(), "config.md `## {heading}` has no row for {missing:?} (the code accepts {keys:?})");
        let stale: Vec<&String> = rows.iter().filter(|r| !keys.contains(*r) && !also.contains(&r.as_str())).collect();
        assert!(stale.is_empty(), "config.md `## {heading}` documents {stale:?}, which the code does not accept");
    }
}

/// The error of a config file with `text` in it, loaded as a file is.
fn load_error(dir: &Path, text: &str) -> String {
    let path = dir.join("switchyard.toml");
    std::fs::write(&path, text).unwrap();
    match Config::load(&path) {
        Ok(_) => panic!("a config with an unknown key was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// The fields serde lists after "unknown field `zz_not_a_key`": `expected
/// one of `a`, `b``, `expected `a``, or `there are no fields`.
fn expected_fields(error: &str) -> BTreeSet<String> {
    let (_, rest) = error
        .split_once("unknown field `zz_not_a_key`")
        .unwrap_or_else(|| panic!("not an unknown-field error for zz_not_a_key: {error}"));
    rest.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// Every key a table holds, as a struct's `Serialize` writes its fields.
fn serialized_keys(value: impl serde::Serialize) -> BTreeSet<String> {
    match serde_json::to_value(value).unwrap() {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        other => panic!("not a table: {other}"),
    }
}

/// The tables whose struct refuses unknown keys (`deny_unknown_fields`):
/// the `##` heading in config.md, a config with `zz_not_a_key` in that
/// table, and keys read outside the struct that the section may document.
const DENYING: &[(&str, &str, &[&str])] = &[
    ("top level", "zz_not_a_key = 1\n", &[]),
    ("[params]", "[params]\nzz_not_a_key = 1\n", &[]),
    ("[btp]", "[btp]\nzz_not_a_key = 1\n", &[]),
    ("[rewoo]", "[rewoo]\nzz_not_a_key = 1\n", &[]),
    ("[retrieval]", "[retrieval]\nzz_not_a_key = 1\n", &[]),
    ("[atc]", "[atc]\nzz_not_a_key = 1\n", &[]),
    ("[atc.limits]", "[atc.limits]\nzz_not_a_key = 1\n", &[]),
    ("[models.NAME] kind = \"sim\"", "[models.m]\nkind = \"sim\"\nzz_not_a_key = 1\n", &["kind"]),
    (
        "[models.NAME] kind = \"openai\"",
        "[models.m]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nzz_not_a_key = 1\n",
        &["kind"],
    ),
    ("[reply_tokens]", "[reply_tokens]\nzz_not_a_key = 1\n", &[]),
    ("[approve]", "[approve]\nzz_not_a_key = 1\n", &[]),
    ("[debug]", "[debug]\nzz_not_a_key = 1\n", &[]),
    ("[otel]", "[otel]\nzz_not_a_key = 1\n", &[]),
    ("[[mcp]]", "[[mcp]]\nname = \"s\"\ncommand = \"s\"\nzz_not_a_key = 1\n", &[]),
    ("[mcp.overrides.TOOL]", "[[mcp]]\nname = \"s\"\ncommand = \"s\"\n[mcp.overrides.t]\nzz_not_a_key = 1\n", &[]),
    ("[[library_options]]", "[[library_options]]\npath = \"f.json\"\nzz_not_a_key = 1\n", &[]),
];

#[test]
fn config_page_documents_every_key_the_config_accepts() {
    let doc = ConfigPage::read();
    let dir = tempfile::tempdir().unwrap();
    for (heading, text, also) in DENYING {
        let keys = expected_fields(&load_error(dir.path(), text));
        doc.check(heading, &keys, also);
    }

    // Every model kind has its section: the kinds from serde's error for an unknown one.
    let e = load_error(dir.path(), "[models.m]\nkind = \"zz_not_a_kind\"\n");
    let kinds: Vec<&str> =
        e.split_once("expected").unwrap_or_else(|| panic!("{e}")).1.split('`').skip(1).step_by(2).collect();
    assert!(kinds.len() >= 2, "{e}");
    for kind in kinds {
        doc.section(&format!("[models.NAME] kind = \"{kind}\""));
    }

    // [models.NAME.price]: `Price` does not refuse unknown keys, so serde
    // names none; its `Serialize` writes every field.
    doc.check("[models.NAME.price]", &serialized_keys(Price::default()), &[]);

    // [roles] is a map from role to model, checked by hand against the roles.
    let e = load_error(dir.path(), "[roles]\nzz_not_a_key = \"sim\"\n");
    assert!(e.contains("unknown role"), "{e}");
    let roles: BTreeSet<String> =
        Role::ALL.iter().chain([&Role::Agent, &Role::Scanner]).map(|r| r.as_str().to_string()).collect();
    doc.check("[roles]", &roles, &[]);

    // A rewoo category's table is taken apart by hand in crates/session/src/config.rs (an
    // untagged enum would not name a stray key), so its keys are this list,
    // held to the list the code's own error gives.
    let category = ["name", "description"];
    let e = load_error(dir.path(), "[[rewoo.categories]]\nname = \"c\"\nzz_not_a_key = 1\n");
    assert!(e.contains(&format!("(expected {})", category.join(", "))), "the category's keys changed: {e}");
    doc.check("[[rewoo.categories]]", &category.iter().map(|k| k.to_string()).collect(), &[]);

    // A header's value (`{ env, prefix }`) is an untagged enum: serde names
    // no fields, so its keys are what its `Serialize` writes. The manifest
    // reader takes the same two in `[[library_options]]` headers.
    let header = serialized_keys(HeaderValue::Env { env: "V".into(), prefix: String::new() });
    doc.check("[mcp.headers]", &header, &[]);
    doc.check("[library_options.headers]", &header, &[]);
}

/// A `[[library_options]]` executor is a manifest's `[tool.executor]`
/// table, read by the manifest reader when the library loads (not when
/// the config does): each kind's keys come from its refusal of an unknown
/// key in a function file's executor.
#[test]
fn config_page_documents_every_executor_key() {
    let doc = ConfigPage::read();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("functions.json");
    std::fs::write(
        &file,
        r#"[{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}}]"#,
    )
    .unwrap();
    let load = |executor: &str| {
        let executor: toml::Table = toml::from_str(executor).unwrap();
        let options = FileOptions { path: file.clone(), executor: Some(executor), ..FileOptions::default() };
        match switchyard::tool::sources::load_json(&file, &options) {
            Ok(_) => panic!("an executor with an unknown key or kind was accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = load("kind = \"zz_not_a_kind\"");
    let (_, kinds) = e.split_once("(expected ").unwrap_or_else(|| panic!("{e}"));
    let kinds: Vec<&str> =
        kinds.trim_end_matches(')').split([',', ' ']).filter(|w| !w.is_empty() && *w != "or").collect();
    assert!(kinds.len() >= 5, "{e}");
    let mut keys = BTreeSet::new();
    for kind in &kinds {
        let e = load(&format!("kind = \"{kind}\"\nzz_not_a_key = 1"));
        assert!(e.contains("unknown field"), "{kind}: {e}");
        keys.extend(e.split_once("unknown field").unwrap().1.split('`').skip(1).step_by(2).map(str::to_string));
        let rows = doc.section("[library_options.executor]");
        assert!(
            rows.contains(&format!("`\"{kind}\"`")),
            "config.md `## [library_options.executor]` does not name kind \"{kind}\""
        );
    }
    keys.insert("kind".to_string());
    doc.check("[library_options.executor]", &keys, &[]);
}
