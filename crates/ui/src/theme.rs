//! Colour themes (`themes/*.toml`): the three shipped ones are embedded, a
//! path loads any other. A broken theme is an error naming the file and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const BUILTIN: [(&str, &str); 3] = [
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    ("high-contrast", include_str!("../../../themes/high-contrast.toml")),
];

#[derive(thiserror::Error, Debug)]
pub enum ThemeError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    Parse { path: PathBuf, why: String },
    #[error("{}: key '{key}': {why}", path.display())]
    Key { path: PathBuf, key: String, why: String },
    #[error("no theme named '{0}' (built in: dark, light, high-contrast; or give a path to a .toml file)")]
    Unknown(String),
}

/// Every colour a view may use, by meaning.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    pub text: Color,
    pub background: Color,
    pub muted: Color,
    pub border: Color,
    pub border_focus: Color,
    pub title: Color,
    pub accent: Color,
    pub selected: Color,
    pub ok: Color,
    pub failing: Color,
    pub fault: Color,
    pub forbidden: Color,
    pub blacklisted: Color,
    pub path: Color,
    pub simulated: Color,
    pub chart_weight: Color,
    pub chart_score: Color,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<String>,
    colors: BTreeMap<String, String>,
}

const KEYS: [&str; 17] = [
    "text",
    "background",
    "muted",
    "border",
    "border_focus",
    "title",
    "accent",
    "selected",
    "ok",
    "failing",
    "fault",
    "forbidden",
    "blacklisted",
    "path",
    "simulated",
    "chart_weight",
    "chart_score",
];

impl Default for Theme {
    fn default() -> Self {
        Theme::builtin("dark").expect("the dark theme ships inside the binary")
    }
}

impl Theme {
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Theme::parse(text, Path::new(&format!("themes/{name}.toml"))).ok()
    }

    /// A shipped theme by name, or a theme file by path.
    pub fn resolve(name_or_path: &str) -> Result<Theme, ThemeError> {
        if let Some(t) = Theme::builtin(name_or_path) {
            return Ok(t);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || path.exists() {
            return Theme::load(path);
        }
        Err(ThemeError::Unknown(name_or_path.to_string()))
    }

    pub fn load(path: &Path) -> Result<Theme, ThemeError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ThemeError::Io { path: path.to_path_buf(), source })?;
        Theme::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Theme, ThemeError> {
        let raw: RawTheme = toml::from_str(text)
            .map_err(|e| ThemeError::Parse { path: path.to_path_buf(), why: crate::config::toml_error(text, &e) })?;
        let key_err = |key: &str, why: String| ThemeError::Key { path: path.to_path_buf(), key: key.to_string(), why };
        for k in raw.colors.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(key_err(&format!("colors.{k}"), format!("unknown colour (known: {})", KEYS.join(", "))));
            }
        }
        let color = |k: &str| -> Result<Color, ThemeError> {
            let v = raw.colors.get(k).ok_or_else(|| key_err(&format!("colors.{k}"), "missing".into()))?;
            Color::from_str(v).map_err(|_| key_err(&format!("colors.{k}"), format!("'{v}' is not a colour")))
        };
        Ok(Theme {
            name: raw
                .name
                .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()),
            text: color("text")?,
            background: color("background")?,
            muted: color("muted")?,
            border: color("border")?,
            border_focus: color("border_focus")?,
            title: color("title")?,
            accent: color("accent")?,
            selected: color("selected")?,
            ok: color("ok")?,
            failing: color("failing")?,
            fault: color("fault")?,
            forbidden: color("forbidden")?,
            blacklisted: color("blacklisted")?,
            path: color("path")?,
            simulated: color("simulated")?,
            chart_weight: color("chart_weight")?,
            chart_score: color("chart_score")?,
        })
    }

    pub fn base(&self) -> Style {
        Style::default().fg(self.text).bg(self.background)
    }

    pub fn muted(&self) -> Style {
        Style::default().fg(self.muted)
    }

    pub fn accent(&self) -> Style {
        Style::default().fg(self.accent).add_modifier(Modifier::BOLD)
    }

    pub fn border(&self, focused: bool) -> Style {
        Style::default().fg(if focused { self.border_focus } else { self.border })
    }

    pub fn title(&self) -> Style {
        Style::default().fg(self.title).add_modifier(Modifier::BOLD)
    }

    pub fn selected(&self) -> Style {
        Style::default().bg(self.selected).add_modifier(Modifier::BOLD)
    }

    pub fn fg(&self, c: Color) -> Style {
        Style::default().fg(c)
    }
}
