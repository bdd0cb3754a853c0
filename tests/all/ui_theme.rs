//! Themes: the shipped ones load; a broken one names the file and the key.

use std::path::Path;

use switchyard::ui::Theme;

#[test]
fn the_shipped_themes_load_and_differ() {
    let themes: Vec<Theme> = ["dark", "light", "high-contrast"].iter().map(|n| Theme::resolve(n).unwrap()).collect();
    assert_eq!(themes[0], Theme::default());
    assert_ne!(themes[0], themes[1]);
    assert_ne!(themes[1], themes[2]);
    // Meaningful colours are told apart within each theme.
    for t in &themes {
        assert_ne!(t.ok, t.failing, "{}", t.name);
        assert_ne!(t.failing, t.fault, "{}", t.name);
    }
}

#[test]
fn a_theme_file_loads_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/light.toml")).unwrap();
    std::fs::write(&path, text.replace("name = \"light\"", "name = \"mine\"")).unwrap();
    assert_eq!(Theme::resolve(path.to_str().unwrap()).unwrap().name, "mine");
}

#[test]
fn broken_themes_name_the_file_and_key() {
    let dark = include_str!("../../themes/dark.toml");
    let cases = [
        (dark.replace("ok = \"lightgreen\"", "ok = \"blurple\""), "colors.ok", "blurple"),
        (dark.replace("ok = \"lightgreen\"\n", ""), "colors.ok", "missing"),
        (dark.replace("[colors]", "[colors]\nsparkle = \"red\""), "colors.sparkle", "unknown colour"),
        (dark.replace("[colors]", "[colors\n"), "line", "expected"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, key, why)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("broken{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let err = Theme::resolve(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains(&format!("broken{i}.toml")), "{err}");
        assert!(err.contains(key) && err.to_lowercase().contains(why), "{err}");
    }
    let err = Theme::resolve("solarized").unwrap_err().to_string();
    assert!(err.contains("no theme named 'solarized'"), "{err}");
}
