//! The layering Cargo cannot check.
//!
//! Cargo keeps the crates' layers: a crate names only the crates it
//! depends on, and the dependencies cannot form a cycle. Three rules are
//! left, each violation printed on its own line:
//!
//! - `crate:` every crate of the workspace sits in a layer of
//!   [`CRATE_LAYERS`] and depends only on crates of lower layers (so two
//!   crates beside each other stay apart, which Cargo would allow).
//! - `layer:` inside a crate whose modules are layers of their own
//!   ([`CRATES`]), every top-level module sits in one, and a file imports
//!   only modules of its own layer or lower (the crate roots are exempt).
//! - `cycle:` no import cycles between the files of a crate. A file refers
//!   to another when it names an item defined there, by a `use` or by an
//!   inline qualified path (`crate::engine::event::EventKind::Done`,
//!   `super::btp::step_cost(..)`). Re-exports (`pub use child::Item;`) are
//!   followed to the file that defines the item. `mod x;` is not a
//!   reference; `#[cfg(test)]` items, comments and string literals are
//!   ignored; a path into another crate is Cargo's to check.
//!
//! Run it with `cargo test --test all layering`. The checker itself (lexer,
//! `use` parser, path resolver, cycle finder) is tested on small inline
//! trees in `mod checker` at the bottom.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::Path;

/// The workspace's crates by layer, lowest first: a crate depends only on
/// crates of lower layers. The vocabulary and building blocks; the engine
/// and its strategies beside the dense models on candle; beside each other,
/// what drives or serves a session (evaluation, the bridge, sessions
/// elsewhere, OpenTelemetry); sessions set up from configuration beside the
/// retrieval laboratory; the workbench; the binary.
const CRATE_LAYERS: &[(u32, &[&str])] = &[
    (0, &["switchyard-core"]),
    (1, &["switchyard-engine", "switchyard-dense"]),
    (2, &["switchyard-eval", "switchyard-bridge", "switchyard-remote", "switchyard-otel"]),
    (3, &["switchyard-session", "switchyard-lab"]),
    (4, &["switchyard-ui"]),
    (5, &["switchyard"]),
];

/// Each crate's folder, and the layers of its top-level modules, lowest
/// first, where they have some: the vocabulary (plain text helpers, tasks)
/// below the building blocks in the core; the engine below the strategies
/// that run on it. `None`: its modules are one layer (cycles still count).
type Layers = &'static [(u32, &'static [&'static str])];
const CRATES: &[(&str, &str, Option<Layers>)] = &[
    (
        "switchyard-core",
        "crates/core",
        Some(&[
            (0, &["text", "task", "jsonl", "dataset"]),
            (1, &["tool", "model", "graph", "retrieve", "budget", "program"]),
        ]),
    ),
    ("switchyard-engine", "crates/engine", Some(&[(0, &["engine"]), (1, &["strategy"])])),
    ("switchyard-dense", "crates/dense", None),
    ("switchyard-eval", "crates/eval", None),
    ("switchyard-bridge", "crates/bridge", None),
    ("switchyard-remote", "crates/remote", None),
    ("switchyard-otel", "crates/otel", None),
    ("switchyard-session", "crates/session", None),
    ("switchyard-lab", "crates/lab", None),
    ("switchyard-ui", "crates/ui", None),
    ("switchyard", ".", None),
];

/// Crate roots, exempt from the layer rule.
const EXEMPT: &[&str] = &["lib.rs", "main.rs"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn layering() {
    let mut violations = crate_violations();
    let mut checked = 0;
    for (name, dir, layers) in CRATES {
        let src = root().join(dir).join("src");
        let mut files = BTreeMap::new();
        read_tree(&src, &src, &mut files);
        assert!(files.contains_key("lib.rs") || files.contains_key("main.rs"), "no crate root under {}", src.display());
        let checker = Checker::new(files, &name.replace('-', "_"));
        checked += checker.edges().len();
        // Paths in a violation are from the crate's `src/`.
        let at = |v: String| format!("{name} ({dir}): {v}");
        if let Some(layers) = layers {
            violations.extend(checker.layer_violations(layers).into_iter().map(at));
        }
        violations.extend(checker.cycle_violations().into_iter().map(at));
    }
    assert!(checked > 0, "the checker found no references between files: it is broken");
    for v in &violations {
        eprintln!("{v}");
    }
    assert!(violations.is_empty(), "{} layering violation(s), listed above", violations.len());
}

/// The `crate:` rule, read from the manifests: every crate of `crates/`
/// (and the root's) is in [`CRATE_LAYERS`] and [`CRATES`], and its
/// workspace dependencies, dev-dependencies too, are of lower layers.
fn crate_violations() -> Vec<String> {
    let layer_of = |c: &str| CRATE_LAYERS.iter().find(|(_, cs)| cs.contains(&c)).map(|(l, _)| *l);
    let mut manifests = vec![root().join("Cargo.toml")];
    let mut dirs: Vec<_> =
        std::fs::read_dir(root().join("crates")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    manifests.extend(dirs.iter().map(|d| d.join("Cargo.toml")));
    let mut out = Vec::new();
    for path in manifests {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let manifest: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        let shown = path.strip_prefix(root()).unwrap().display().to_string();
        let Some(own) = layer_of(&name) else {
            out.push(format!("crate: {shown}: {name} is in no layer; add it to CRATE_LAYERS in tests/all/layering.rs"));
            continue;
        };
        if !CRATES.iter().any(|(n, ..)| *n == name) {
            out.push(format!("crate: {shown}: {name} is not in CRATES in tests/all/layering.rs"));
        }
        for table in ["dependencies", "dev-dependencies"] {
            let Some(deps) = manifest.get(table).and_then(|t| t.as_table()) else { continue };
            for dep in deps.keys().filter(|d| d.starts_with("switchyard")) {
                match layer_of(dep) {
                    Some(l) if l < own => {}
                    Some(l) => out.push(format!(
                        "crate: {shown}: {name} (layer {own}) depends on {dep} (layer {l}) in [{table}]"
                    )),
                    None => out.push(format!("crate: {shown}: {name} depends on {dep}, which is in no layer")),
                }
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, keyed by its path relative to `src/` with
/// `/` separators (`engine/mod.rs`).
fn read_tree(src: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_tree(src, &path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let rel = path.strip_prefix(src).expect("under src");
            let key = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            out.insert(key.join("/"), text);
        }
    }
}

// ---------------------------------------------------------------------------
// Lexing: comments and literals blanked, then tokens with line numbers.

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with comments, string literals and char literals replaced by
/// spaces; newlines are kept, so line numbers stay right.
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let at = |k: usize| c.get(k).copied();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let end = if c[i] == '/' && at(i + 1) == Some('/') {
            let mut j = i;
            while j < c.len() && c[j] != '\n' {
                j += 1;
            }
            j
        } else if c[i] == '/' && at(i + 1) == Some('*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && at(j + 1) == Some('*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && at(j + 1) == Some('/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            j.min(c.len())
        } else if let Some(j) = raw_string_end(&c, i) {
            j
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(c.len())
        } else if c[i] == '\'' && at(i + 1) == Some('\\') {
            let mut j = i + 3;
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            (j + 1).min(c.len())
        } else if c[i] == '\'' && at(i + 2) == Some('\'') {
            i + 3
        } else {
            // Code, or a lifetime's quote.
            out.push(c[i]);
            i += 1;
            continue;
        };
        out.extend(c[i..end].iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
        i = end;
    }
    out
}

/// If a raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) starts at `i`, the
/// index just past it.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && is_ident_char(c[i - 1]) {
        return None;
    }
    let mut j = i;
    if matches!(c.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
}

impl Token {
    fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    fn is(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }

    fn is_sep(&self) -> bool {
        self.tok == Tok::PathSep
    }
}

/// Tokens of stripped source: identifiers (raw ones unwrapped), `::` and
/// single punctuation; numbers, lifetimes and whitespace are dropped.
fn tokenize(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            toks.push(Token { tok: Tok::PathSep, line });
            i += 2;
        } else if ch == '\'' || ch.is_ascii_digit() {
            // A lifetime or label, or a number.
            i += 1;
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
        } else if is_ident_char(ch) {
            let mut j = i;
            while j < c.len() && is_ident_char(c[j]) {
                j += 1;
            }
            let mut start = i;
            if j == i + 1 && ch == 'r' && c.get(j) == Some(&'#') && c.get(j + 1).is_some_and(|&x| is_ident_char(x)) {
                start = j + 1;
                j = start;
                while j < c.len() && is_ident_char(c[j]) {
                    j += 1;
                }
            }
            toks.push(Token { tok: Tok::Ident(c[start..j].iter().collect()), line });
            i = j;
        } else {
            toks.push(Token { tok: Tok::Punct(ch), line });
            i += 1;
        }
    }
    toks
}

/// Index of the bracket closing the one opened at `open`.
fn matching(t: &[Token], open: usize) -> usize {
    let mut depth = 0i64;
    for (k, tok) in t.iter().enumerate().skip(open) {
        match tok.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    t.len().saturating_sub(1)
}

fn is_cfg_test(t: &[Token], i: usize) -> bool {
    t.len() > i + 6
        && t[i].is('#')
        && t[i + 1].is('[')
        && t[i + 2].ident() == Some("cfg")
        && t[i + 3].is('(')
        && t[i + 4].ident() == Some("test")
        && t[i + 5].is(')')
        && t[i + 6].is(']')
}

/// The tokens without `#[cfg(test)]` items (`mod tests { … }`, or any other
/// item: up to its `;` or through its braces).
fn drop_cfg_test(t: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if !is_cfg_test(&t, i) {
            out.push(t[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // Other attributes on the same item.
        while i + 1 < t.len() && t[i].is('#') && t[i + 1].is('[') {
            i = matching(&t, i + 1) + 1;
        }
        let mut depth = 0i64;
        while i < t.len() {
            match t[i].tok {
                Tok::Punct('{') if depth == 0 => {
                    i = matching(&t, i) + 1;
                    break;
                }
                Tok::Punct(';') if depth == 0 => {
                    i += 1;
                    break;
                }
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => depth -= 1,
                _ => {}
            }
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Parsing: `use` trees, inline paths, and the names a file defines.

/// The name a `use` leaf brings into scope.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Bind {
    Name(String),
    Glob,
    /// `as _`
    Hidden,
}

/// One leaf of a `use` tree, with the prefix of its groups prepended:
/// `use a::{b, c::{d as e}}` has leaves `a::b` (b) and `a::c::d` (e).
#[derive(Clone, Debug, PartialEq, Eq)]
struct UseLeaf {
    /// Segments as written, `crate`/`self`/`super` included; a leading `::`
    /// is kept as a `"::"` segment; a trailing `self` is dropped.
    path: Vec<String>,
    bind: Bind,
    /// The line of its `use`.
    line: usize,
    text: String,
}

/// A qualified path in code, outside `use`: `super::btp::step_cost`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PathRef {
    path: Vec<String>,
    line: usize,
}

#[derive(Debug, Default)]
struct Parsed {
    uses: Vec<UseLeaf>,
    paths: Vec<PathRef>,
    /// Names after an item keyword (`fn`, `struct`, `mod`, …).
    defines: HashSet<String>,
    /// `mod x;` declarations.
    mods: Vec<String>,
}

impl Parsed {
    fn binding(&self, name: &str) -> Option<&UseLeaf> {
        self.uses.iter().find(|u| u.bind == Bind::Name(name.to_string()))
    }

    fn globs(&self) -> impl Iterator<Item = &UseLeaf> {
        self.uses.iter().filter(|u| u.bind == Bind::Glob)
    }
}

const ITEM_KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod"];

fn parse(src: &str) -> Parsed {
    let t = drop_cfg_test(tokenize(&strip(src)));
    let mut p = Parsed::default();
    let mut i = 0;
    while i < t.len() {
        let Some(word) = t[i].ident() else {
            i += 1;
            continue;
        };
        let next = t.get(i + 1);
        if word == "use" && !next.is_some_and(|n| n.is('<')) {
            // `use<'a>` is precise capturing, not an import.
            let (mut pos, first) = (i + 1, p.uses.len());
            use_tree(&t, &mut pos, &[], &mut p.uses);
            // One line per `use`, however many lines its groups span.
            for leaf in &mut p.uses[first..] {
                leaf.line = t[i].line;
            }
            while pos < t.len() && !t[pos].is(';') {
                pos += 1;
            }
            i = pos + 1;
            continue;
        }
        if ITEM_KEYWORDS.contains(&word) {
            if let Some(name) = next.and_then(Token::ident) {
                p.defines.insert(name.to_string());
                if word == "mod" && t.get(i + 2).is_some_and(|n| n.is(';')) {
                    p.mods.push(name.to_string());
                }
            }
        } else if word == "macro_rules" && next.is_some_and(|n| n.is('!')) {
            if let Some(name) = t.get(i + 2).and_then(Token::ident) {
                p.defines.insert(name.to_string());
            }
        } else if next.is_some_and(Token::is_sep) && !(i > 0 && t[i - 1].is_sep()) {
            let line = t[i].line;
            let mut path = vec![word.to_string()];
            let mut j = i + 1;
            while j + 1 < t.len() && t[j].is_sep() {
                let Some(seg) = t[j + 1].ident() else { break };
                path.push(seg.to_string());
                j += 2;
            }
            if path.len() > 1 {
                p.paths.push(PathRef { path, line });
            }
            i = j;
            continue;
        }
        i += 1;
    }
    p
}

/// Parses one use tree at `pos` (after `use`, or inside a group) into leaves.
fn use_tree(t: &[Token], pos: &mut usize, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let mut path = prefix.to_vec();
    if path.is_empty() && t.get(*pos).is_some_and(Token::is_sep) {
        path.push("::".to_string());
        *pos += 1;
    }
    while let Some(tok) = t.get(*pos) {
        if tok.is('{') {
            *pos += 1;
            while let Some(tok) = t.get(*pos) {
                if tok.is('}') {
                    *pos += 1;
                    break;
                }
                if tok.is(',') {
                    *pos += 1;
                    continue;
                }
                let before = *pos;
                use_tree(t, pos, &path, out);
                if *pos == before {
                    *pos += 1;
                }
            }
            return;
        }
        if tok.is('*') {
            let text = format!("use {}::*", path.join("::"));
            out.push(UseLeaf { path, bind: Bind::Glob, line: tok.line, text });
            *pos += 1;
            return;
        }
        let Some(name) = tok.ident() else { return };
        let line = tok.line;
        path.push(name.to_string());
        *pos += 1;
        if t.get(*pos).is_some_and(Token::is_sep) {
            *pos += 1;
            continue;
        }
        if name == "self" {
            path.pop();
        }
        let mut text = format!("use {}", path.join("::"));
        let mut bind = path.last().map_or(Bind::Hidden, |s| Bind::Name(s.clone()));
        if t.get(*pos).and_then(Token::ident) == Some("as") {
            if let Some(alias) = t.get(*pos + 1).and_then(Token::ident) {
                bind = if alias == "_" { Bind::Hidden } else { Bind::Name(alias.to_string()) };
                text = format!("{text} as {alias}");
                *pos += 2;
            }
        }
        out.push(UseLeaf { path, bind, line, text });
        return;
    }
}

// ---------------------------------------------------------------------------
// Resolution: which file a path refers to.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    /// `src/lib.rs`
    Lib,
    /// `src/main.rs` and the modules it declares.
    Bin,
}

struct File {
    parsed: Parsed,
    /// Module path from its crate root: `engine/mod.rs` → `[engine]`.
    module: Vec<String>,
    root: Root,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RefKind {
    /// A `use` leaf.
    Use,
    /// A path in code from `crate`, `self`, `super`, the library's name or
    /// a child module.
    Path,
    /// A path in code through a name a `use` of the same file imported.
    Alias,
}

/// One reference from a file to a path in the crate.
#[derive(Clone, Debug)]
struct Ref {
    from: String,
    line: usize,
    text: String,
    /// The file that defines what the path names.
    to: Option<String>,
    /// The top-level module the path names (`crate::eval::…` → `eval`).
    top: Option<String>,
    /// Whether this is an import in its own right (not a path through a
    /// name another `use` of the same file already imported).
    layered: bool,
}

struct Checker {
    lib_name: String,
    files: BTreeMap<String, File>,
}

impl Checker {
    /// `files`: path relative to `src/` → text. `lib_name`: the library's
    /// crate name, as the binary's modules spell it (`switchyard::…`).
    fn new(texts: BTreeMap<String, String>, lib_name: &str) -> Self {
        let parsed: BTreeMap<String, Parsed> = texts.into_iter().map(|(key, text)| (key, parse(&text))).collect();
        let mods = |root: &str| parsed.get(root).map(|p| p.mods.clone()).unwrap_or_default();
        let (lib_mods, bin_mods) = (mods("lib.rs"), mods("main.rs"));
        let files = parsed
            .into_iter()
            .map(|(key, parsed)| {
                let module = module_of(&key);
                let root = match module.first() {
                    None if key == "main.rs" => Root::Bin,
                    Some(top) if bin_mods.contains(top) && !lib_mods.contains(top) => Root::Bin,
                    _ => Root::Lib,
                };
                (key, File { parsed, module, root })
            })
            .collect();
        Checker { lib_name: lib_name.to_string(), files }
    }

    /// The file of a module, if there is one.
    fn module_file(&self, root: Root, module: &[String]) -> Option<String> {
        if module.is_empty() {
            let key = if root == Root::Lib { "lib.rs" } else { "main.rs" };
            return self.files.contains_key(key).then(|| key.to_string());
        }
        let base = module.join("/");
        [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find(|k| self.files.contains_key(k))
    }

    fn is_module(&self, root: Root, module: &[String]) -> bool {
        !module.is_empty() && self.module_file(root, module).is_some()
    }

    /// The path `segs`, written in `file`, as a path from its crate's root;
    /// None for external crates and for names local to the file.
    fn absolute(&self, file: &str, segs: &[String], depth: usize) -> Option<(Root, Vec<String>)> {
        let f = self.files.get(file)?;
        let first = segs.first()?;
        if depth > 8 || first == "::" {
            return None;
        }
        let mut module = f.module.clone();
        let absolute = |root: Root, mut head: Vec<String>, tail: &[String]| {
            head.extend_from_slice(tail);
            Some((root, head))
        };
        match first.as_str() {
            "crate" => return absolute(f.root, vec![], &segs[1..]),
            "self" | "super" => {
                let mut i = usize::from(first == "self");
                while segs.get(i).is_some_and(|s| s == "super") {
                    module.pop()?;
                    i += 1;
                }
                return absolute(f.root, module, &segs[i..]);
            }
            _ if *first == self.lib_name => return absolute(Root::Lib, vec![], &segs[1..]),
            _ => {}
        }
        // Edition 2018 paths: a child module, or a name this file imports.
        module.push(first.clone());
        if self.is_module(f.root, &module) {
            return absolute(f.root, module, &segs[1..]);
        }
        module.pop();
        if let Some(leaf) = f.parsed.binding(first) {
            let mut target = leaf.path.clone();
            target.extend_from_slice(&segs[1..]);
            return self.absolute(file, &target, depth + 1);
        }
        // A name that a glob import of this file brings in.
        for glob in f.parsed.globs() {
            let Some((root, mut gabs)) = self.absolute(file, &glob.path, depth + 1) else { continue };
            let Some(gfile) = self.module_file(root, &gabs) else { continue };
            gabs.push(first.clone());
            if self.is_module(root, &gabs) || self.files[&gfile].parsed.binding(first).is_some() {
                return absolute(root, gabs, &segs[1..]);
            }
        }
        None
    }

    /// The file that defines what the absolute path `abs` names: the longest
    /// prefix that is a module, then re-exports followed. `value`: the last
    /// segment is a value or type (a path in code), never a module, so
    /// `builtin::lookup(..)` is the function even beside `mod lookup`.
    fn walk(&self, root: Root, abs: &[String], value: bool, depth: usize) -> Option<String> {
        let mut module = Vec::new();
        let mut i = 0;
        while i < abs.len() && !(value && i + 1 == abs.len()) {
            module.push(abs[i].clone());
            if !self.is_module(root, &module) {
                module.pop();
                break;
            }
            i += 1;
        }
        let file = self.module_file(root, &module)?;
        if i == abs.len() { Some(file) } else { self.item_file(&file, &abs[i], &abs[i + 1..], value, depth) }
    }

    /// The file that defines `name`, named from module file `file`: `file`
    /// itself unless `file` only imports or re-exports it.
    fn item_file(&self, file: &str, name: &str, rest: &[String], value: bool, depth: usize) -> Option<String> {
        let f = &self.files[file];
        if depth > 8 || f.parsed.defines.contains(name) {
            return Some(file.to_string());
        }
        if let Some(leaf) = f.parsed.binding(name) {
            let mut target = leaf.path.clone();
            target.extend_from_slice(rest);
            // An import of something external: no file of ours.
            let (root, abs) = self.absolute(file, &target, depth + 1)?;
            return self.walk(root, &abs, value, depth + 1);
        }
        for glob in f.parsed.globs() {
            let Some((root, mut gabs)) = self.absolute(file, &glob.path, depth + 1) else { continue };
            let Some(gfile) = self.module_file(root, &gabs) else { continue };
            let g = &self.files[&gfile].parsed;
            if g.defines.contains(name) || g.binding(name).is_some() {
                gabs.push(name.to_string());
                gabs.extend_from_slice(rest);
                return self.walk(root, &gabs, value, depth + 1);
            }
        }
        Some(file.to_string())
    }

    fn reference(&self, from: &str, path: &[String], line: usize, text: String, kind: RefKind) -> Option<Ref> {
        let (root, abs) = self.absolute(from, path, 0)?;
        let to = self.walk(root, &abs, kind != RefKind::Use, 0);
        let layered = kind != RefKind::Alias;
        let top = match abs.first() {
            Some(top) if self.is_module(root, std::slice::from_ref(top)) => Some(top.clone()),
            _ => to.as_ref().and_then(|t| self.files[t].module.first().cloned()),
        };
        Some(Ref { from: from.to_string(), line, text, to, top, layered })
    }

    /// Every reference of every file to something in the crate.
    fn refs(&self) -> Vec<Ref> {
        let mut refs = Vec::new();
        for (key, f) in &self.files {
            for leaf in &f.parsed.uses {
                refs.extend(self.reference(key, &leaf.path, leaf.line, leaf.text.clone(), RefKind::Use));
            }
            for p in &f.parsed.paths {
                let first = &p.path[0];
                let mut child = f.module.clone();
                child.push(first.clone());
                let own = matches!(first.as_str(), "crate" | "self" | "super")
                    || *first == self.lib_name
                    || self.is_module(f.root, &child);
                let kind = if own { RefKind::Path } else { RefKind::Alias };
                refs.extend(self.reference(key, &p.path, p.line, p.path.join("::"), kind));
            }
        }
        refs
    }

    /// File → file edges, each with the lines that make it.
    fn edges(&self) -> BTreeMap<(String, String), Vec<(usize, String)>> {
        let mut edges: BTreeMap<(String, String), Vec<(usize, String)>> = BTreeMap::new();
        for r in self.refs() {
            let Some(to) = r.to else { continue };
            if to != r.from {
                let lines = edges.entry((r.from, to)).or_default();
                if !lines.iter().any(|(l, t)| *l == r.line && *t == r.text) {
                    lines.push((r.line, r.text));
                }
            }
        }
        for lines in edges.values_mut() {
            lines.sort();
        }
        edges
    }

    /// Top-level modules found in `src/`, with a file of each.
    fn top_modules(&self) -> BTreeMap<String, String> {
        let mut tops = BTreeMap::new();
        for (key, f) in &self.files {
            if let Some(top) = f.module.first() {
                tops.entry(top.clone()).or_insert_with(|| key.clone());
            }
        }
        tops
    }

    fn layer_violations(&self, layers: &[(u32, &[&str])]) -> Vec<String> {
        let layer_of = |m: &str| layers.iter().find(|(_, ms)| ms.contains(&m)).map(|(l, _)| *l);
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (_, ms) in layers {
            for m in ms.iter() {
                if !seen.insert(*m) {
                    out.push(format!("layer: module {m} is listed twice in the layer table"));
                }
            }
        }
        for (top, key) in self.top_modules() {
            if layer_of(&top).is_none() {
                out.push(format!(
                    "layer: src/{key}: module {top} is in no layer; add it to CRATES in tests/all/layering.rs"
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for r in self.refs() {
            if !r.layered || EXEMPT.contains(&r.from.as_str()) {
                continue;
            }
            let (Some(own), Some(top)) = (self.files[&r.from].module.first(), r.top.as_ref()) else { continue };
            let (Some(lo), Some(hi)) = (layer_of(own), layer_of(top)) else { continue };
            if hi > lo && seen.insert((r.from.clone(), r.line, top.clone())) {
                out.push(format!(
                    "layer: src/{}:{} imports {top} (layer {hi}) from {own} (layer {lo}): {}",
                    r.from, r.line, r.text
                ));
            }
        }
        out
    }

    fn cycle_violations(&self) -> Vec<String> {
        let edges = self.edges();
        let mut adj: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (from, to) in edges.keys() {
            adj.entry(from).or_default().insert(to);
        }
        let nodes: Vec<&str> = self.files.keys().map(String::as_str).collect();
        let mut out = Vec::new();
        for scc in strongly_connected(&nodes, &adj) {
            if scc.len() < 2 {
                continue;
            }
            for cycle in covering_cycles(&scc, &adj) {
                out.push(describe_cycle(&cycle, &edges));
            }
        }
        out
    }
}

/// `engine/mod.rs` → `[engine]`, `model/sim/rewoo.rs` → `[model, sim,
/// rewoo]`, `lib.rs` → `[]`.
fn module_of(key: &str) -> Vec<String> {
    if EXEMPT.contains(&key) {
        return Vec::new();
    }
    let mut segs: Vec<String> = key.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "mod.rs") {
        segs.pop();
    } else if let Some(last) = segs.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    segs
}

// ---------------------------------------------------------------------------
// Cycles.

/// Tarjan's strongly connected components, each sorted, in a stable order.
fn strongly_connected<'a>(nodes: &[&'a str], adj: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    struct Tarjan<'a, 'b> {
        adj: &'b BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: HashSet<&'a str>,
        out: Vec<Vec<&'a str>>,
    }
    impl<'a> Tarjan<'a, '_> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for &w in self.adj.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                scc.sort();
                self.out.push(scc);
            }
        }
    }
    let mut t = Tarjan {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: HashSet::new(),
        out: Vec::new(),
    };
    for &v in nodes {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// Cycles within one strongly connected component that together use every
/// edge inside it: for each edge not yet used, the edge plus the shortest
/// way back. Each cycle is its nodes in order, the first repeated at the end.
fn covering_cycles<'a>(scc: &[&'a str], adj: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    let inside: BTreeSet<&str> = scc.iter().copied().collect();
    let mut used = BTreeSet::new();
    let mut cycles = Vec::new();
    for &u in scc {
        for &v in adj.get(u).into_iter().flatten().filter(|v| inside.contains(*v)) {
            if used.contains(&(u, v)) {
                continue;
            }
            // Shortest path v → u inside the component.
            let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = VecDeque::from([v]);
            let mut reached = v == u;
            while let Some(x) = queue.pop_front() {
                if x == u {
                    reached = true;
                    break;
                }
                for &y in adj.get(x).into_iter().flatten() {
                    if inside.contains(y) && y != v && !prev.contains_key(y) {
                        prev.insert(y, x);
                        queue.push_back(y);
                    }
                }
            }
            if !reached {
                continue;
            }
            let mut back = vec![u];
            let mut x = u;
            while x != v {
                x = prev[x];
                back.push(x);
            }
            back.reverse();
            let mut cycle = vec![u];
            cycle.extend(back);
            for pair in cycle.windows(2) {
                used.insert((pair[0], pair[1]));
            }
            // Start at the smallest file, for a stable report.
            cycle.pop();
            let start = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
            cycle.rotate_left(start);
            cycle.push(cycle[0]);
            cycles.push(cycle);
        }
    }
    cycles
}

fn describe_cycle(cycle: &[&str], edges: &BTreeMap<(String, String), Vec<(usize, String)>>) -> String {
    let files = if cycle.len() == 3 {
        format!("src/{} <-> src/{}", cycle[0], cycle[1])
    } else {
        cycle.iter().map(|f| format!("src/{f}")).collect::<Vec<_>>().join(" -> ")
    };
    let evidence: Vec<String> = cycle
        .windows(2)
        .map(|pair| {
            let lines = &edges[&(pair[0].to_string(), pair[1].to_string())];
            let (line, text) = &lines[0];
            let more = if lines.len() > 1 { format!(" (+{} more)", lines.len() - 1) } else { String::new() };
            format!("{}:{line} {text}{more}", pair[0])
        })
        .collect();
    format!("cycle: {files} ({})", evidence.join(", "))
}

// ---------------------------------------------------------------------------
// The checker's own tests, on small inline trees.

mod checker {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Checker {
        let files = files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Checker::new(files, "mycrate")
    }

    fn leaves(src: &str) -> Vec<(String, Bind)> {
        parse(src).uses.into_iter().map(|u| (u.path.join("::"), u.bind)).collect()
    }

    fn name(s: &str) -> Bind {
        Bind::Name(s.to_string())
    }

    /// Edges as `from -> to` strings.
    fn edges(c: &Checker) -> Vec<String> {
        c.edges().keys().map(|(a, b)| format!("{a} -> {b}")).collect()
    }

    #[test]
    fn grouped_uses_with_renames_self_and_globs() {
        let src =
            "pub(crate) use crate::a::{b, c::{d, e as f, self}, g::*};\nuse super::super::h::I as _;\nuse ::std::fmt;";
        assert_eq!(
            leaves(src),
            vec![
                ("crate::a::b".to_string(), name("b")),
                ("crate::a::c::d".to_string(), name("d")),
                ("crate::a::c::e".to_string(), name("f")),
                ("crate::a::c".to_string(), name("c")),
                ("crate::a::g".to_string(), Bind::Glob),
                ("super::super::h::I".to_string(), Bind::Hidden),
                ("::::std::fmt".to_string(), name("fmt")),
            ]
        );
        let lines: Vec<usize> = parse("\nuse a::{\n    b,\n    c,\n};").uses.iter().map(|u| u.line).collect();
        assert_eq!(lines, vec![2, 2]);
        // `self as x` binds x to the module itself.
        assert_eq!(leaves("use crate::p::{self as q};"), vec![("crate::p".to_string(), name("q"))]);
        // Precise capturing is not an import.
        assert!(parse("fn f() -> impl Sized + use<> {}").uses.is_empty());
    }

    #[test]
    fn comments_strings_and_chars_are_ignored() {
        let src = r##"
// use crate::x::A;
/// use crate::x::B;
//! crate::x::C
/* use crate::x::D; /* nested */ crate::x::E */
fn f<'a>(s: &'a str) -> char {
    let _ = "use crate::x::F; \" crate::x::G";
    let _ = r#"crate::x::H "quoted" "#;
    let _ = '{';
    let _ = '\'';
    crate::y::real();
    '}'
}
"##;
        let p = parse(src);
        assert!(p.uses.is_empty(), "{:?}", p.uses);
        assert_eq!(p.paths, vec![PathRef { path: vec!["crate".into(), "y".into(), "real".into()], line: 11 }]);
    }

    #[test]
    fn cfg_test_blocks_are_ignored() {
        let src = "use crate::a::A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n    fn f() { let _ = \"}\"; let _ = '}'; crate::c::f(); }\n    mod inner { use crate::d::D; }\n}\nuse crate::e::E;\n#[cfg(test)]\n#[allow(unused)]\nuse crate::f::F;\n";
        assert_eq!(leaves(src), vec![("crate::a::A".to_string(), name("A")), ("crate::e::E".to_string(), name("E"))]);
        assert_eq!(parse(src).uses[1].line, 8);
        assert!(parse(src).paths.is_empty());
    }

    #[test]
    fn inline_paths_are_found_whole() {
        let src = "fn f() {\n    let k = crate::engine::event::EventKind::X;\n    super::btp::step_cost(1);\n    Vec::<crate::t::T>::new();\n    x.y.z();\n}";
        let paths: Vec<(String, usize)> = parse(src).paths.into_iter().map(|p| (p.path.join("::"), p.line)).collect();
        assert_eq!(
            paths,
            vec![
                ("crate::engine::event::EventKind::X".to_string(), 2),
                ("super::btp::step_cost".to_string(), 3),
                ("crate::t::T".to_string(), 4),
            ]
        );
    }

    #[test]
    fn super_chains_and_layouts_resolve_to_files() {
        let c = tree(&[
            ("lib.rs", "pub mod a; pub mod x; pub mod m;"),
            ("a/mod.rs", "pub mod b;"),
            ("a/b/mod.rs", "pub mod c; pub mod d;"),
            (
                "a/b/c.rs",
                "use super::super::super::x::Y;\nuse super::d::Z;\nfn f() { self::g(); crate::m::n::N::new(); }\nfn g() {}",
            ),
            ("a/b/d.rs", "pub struct Z;"),
            ("x.rs", "pub struct Y;"),
            // `m.rs` with a folder `m/`.
            ("m.rs", "pub mod n; pub struct M;"),
            ("m/n.rs", "pub struct N; fn f() -> super::M { crate::m::M }"),
        ]);
        assert_eq!(edges(&c), vec!["a/b/c.rs -> a/b/d.rs", "a/b/c.rs -> m/n.rs", "a/b/c.rs -> x.rs", "m/n.rs -> m.rs"]);
    }

    #[test]
    fn a_path_in_code_ends_in_a_value_not_a_module() {
        let c = tree(&[
            ("lib.rs", "pub mod b; pub mod e;"),
            ("b/mod.rs", "mod lookup;\npub fn lookup() { lookup::country() }"),
            ("b/lookup.rs", "pub fn country() {}"),
            ("e.rs", "use crate::b;\nfn f() { b::lookup(); crate::b::lookup::country(); }"),
        ]);
        // `b::lookup()` is the function in b/mod.rs; `lookup::country` is in
        // the module.
        assert_eq!(edges(&c), vec!["b/mod.rs -> b/lookup.rs", "e.rs -> b/lookup.rs", "e.rs -> b/mod.rs"]);
    }

    #[test]
    fn reexports_are_followed_to_the_defining_file() {
        let c = tree(&[
            ("lib.rs", "pub mod p;"),
            (
                "p/mod.rs",
                "mod child;\nmod sib;\npub use child::{Item, Other};\npub use sib::Helper;\nuse std::sync::Arc;\npub struct Own;",
            ),
            ("p/child.rs", "use super::Helper;\nuse super::Arc;\npub struct Item;\npub struct Other;"),
            ("p/sib.rs", "pub struct Helper;\nfn f() -> super::Item { todo!() }"),
        ]);
        // The parent re-exports both children, and the child names its
        // sibling through the parent: no cycle, and `super::Arc` is std.
        assert_eq!(
            edges(&c),
            vec!["p/child.rs -> p/sib.rs", "p/mod.rs -> p/child.rs", "p/mod.rs -> p/sib.rs", "p/sib.rs -> p/child.rs"]
        );
        assert_eq!(
            c.cycle_violations(),
            vec!["cycle: src/p/child.rs <-> src/p/sib.rs (p/child.rs:1 use super::Helper, p/sib.rs:2 super::Item)"]
        );
        // An item the parent defines itself is a real reference to the parent.
        let c = tree(&[
            ("lib.rs", "pub mod p;"),
            ("p/mod.rs", "mod child;\npub use child::Item;\npub struct Own;"),
            ("p/child.rs", "pub struct Item(super::Own);"),
        ]);
        assert_eq!(
            c.cycle_violations(),
            vec!["cycle: src/p/child.rs <-> src/p/mod.rs (p/child.rs:1 super::Own, p/mod.rs:2 use child::Item)"]
        );
        // Globs re-export too.
        let c = tree(&[
            ("lib.rs", "pub mod p; pub mod q;"),
            ("p/mod.rs", "mod child;\npub use child::*;"),
            ("p/child.rs", "pub fn deep() {}"),
            ("q.rs", "fn f() { crate::p::deep() }"),
        ]);
        assert_eq!(edges(&c), vec!["p/mod.rs -> p/child.rs", "q.rs -> p/child.rs"]);
    }

    #[test]
    fn aliases_and_the_binary_crate() {
        let c = tree(&[
            ("lib.rs", "pub mod s; pub mod t;"),
            ("main.rs", "mod cli;\nfn main() { cli::main() }"),
            ("cli.rs", "use mycrate::s;\npub fn main() { s::run(); mycrate::t::T::new(); crate::main(); }"),
            ("s/mod.rs", "pub mod proto;"),
            ("s/proto.rs", "pub fn run() {}"),
            ("t.rs", "use crate::s::proto::{self as rp};\nfn f() { rp::run() }\npub struct T;"),
        ]);
        assert_eq!(
            edges(&c),
            vec![
                "cli.rs -> main.rs",
                "cli.rs -> s/mod.rs",
                "cli.rs -> t.rs",
                "main.rs -> cli.rs",
                "t.rs -> s/proto.rs"
            ]
        );
        let refs = c.refs();
        let run = refs.iter().find(|r| r.text == "s::run").expect("s::run");
        assert_eq!((run.to.as_deref(), run.layered), (Some("s/mod.rs"), false));
    }

    #[test]
    fn layers_and_cycles_are_reported() {
        let c = tree(&[
            ("lib.rs", "pub mod low; pub mod high; pub mod stray;"),
            ("low.rs", "use crate::high::H;\npub struct L;"),
            ("high.rs", "pub struct H(crate::low::L);"),
            ("stray.rs", "// This file belongs here; it is not overlong.\n"),
        ]);
        let layers: &[(u32, &[&str])] = &[(0, &["low"]), (1, &["high"])];
        assert_eq!(
            c.layer_violations(layers),
            vec![
                "layer: src/stray.rs: module stray is in no layer; add it to CRATES in tests/all/layering.rs",
                "layer: src/low.rs:1 imports high (layer 1) from low (layer 0): use crate::high::H",
            ]
        );
        assert_eq!(
            c.cycle_violations(),
            vec!["cycle: src/high.rs <-> src/low.rs (high.rs:1 crate::low::L, low.rs:1 use crate::high::H)"]
        );
    }

    #[test]
    fn longer_cycles_cover_every_edge() {
        let c = tree(&[
            ("lib.rs", "pub mod a; pub mod b; pub mod c;"),
            ("a.rs", "use crate::b::B;\npub struct A;"),
            ("b.rs", "use crate::c::C;\npub struct B;"),
            ("c.rs", "use crate::a::A;\nuse crate::b::B;\npub struct C;"),
        ]);
        assert_eq!(
            c.cycle_violations(),
            vec![
                "cycle: src/a.rs -> src/b.rs -> src/c.rs -> src/a.rs (a.rs:1 use crate::b::B, b.rs:1 use crate::c::C, c.rs:1 use crate::a::A)",
                "cycle: src/b.rs <-> src/c.rs (b.rs:1 use crate::c::C, c.rs:2 use crate::b::B)",
            ]
        );
    }
}
