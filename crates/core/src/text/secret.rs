//! API keys and other values read from the environment that must never be
//! written anywhere: not in a trace, a log, an error, a cassette or an
//! exported span.
//!
//! A key is held as a [`Secret`], whose `Debug` and `Display` print `***`.
//! Reading one registers it process-wide, so that [`redact`] can take it out
//! of any text an endpoint sends back: an endpoint may quote the request's
//! Authorization header in an error body, or even in a reply, and a
//! transport error may quote a URL. Every place that quotes such text runs
//! it through `redact` (or [`redact_bytes`]) before it goes on.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::sync::RwLock;

/// What a secret is replaced with.
pub const MASK: &str = "***";

/// Shorter values are not registered for redaction: masking every "abc" of
/// every text would garble far more than it could protect.
const MIN_LEN: usize = 4;

/// Every registered secret, in each form a leak could take.
static FORMS: RwLock<Vec<Vec<u8>>> = RwLock::new(Vec::new());

/// A value that prints as `***`; [`Secret::expose`] is the only way to it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Registers `value` for redaction.
    pub fn new(value: impl Into<String>) -> Secret {
        let value = value.into();
        register(&value);
        Secret(value)
    }

    /// The trimmed value of the environment variable `var`, registered;
    /// None when it is unset or blank.
    pub fn from_env(var: &str) -> Option<Secret> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Some(Secret::new(v.trim())),
            _ => None,
        }
    }

    /// The value itself, for the header that carries it and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A new random token, `PREFIX-` and 48 hex digits, registered.
    pub fn random(prefix: &str) -> Secret {
        use rand::RngCore;
        let mut bytes = [0u8; 24];
        rand::rng().fill_bytes(&mut bytes);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Secret::new(format!("{prefix}-{hex}"))
    }

    /// Whether `guess` is this value. Compared without stopping at the
    /// first difference, so the time a refusal takes says nothing of how
    /// much of a guess was right.
    pub fn matches(&self, guess: &str) -> bool {
        let (a, b) = (guess.as_bytes(), self.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

/// Registers a value read from somewhere other than a [`Secret`] (a header
/// a library reads from the environment itself): the value as it is, URL-
/// encoded and base64-encoded (standard and URL-safe, unpadded, so it is
/// found inside a longer encoded text that starts with it).
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_LEN {
        return;
    }
    let b64 = base64(value.as_bytes());
    let forms = [
        value.to_string(),
        url_encode(value),
        b64.clone(),
        b64.replace('+', "-").replace('/', "_"),
        base64(format!("Bearer {value}").as_bytes()),
    ];
    let mut all = FORMS.write().unwrap_or_else(|e| e.into_inner());
    for form in forms {
        let form = form.into_bytes();
        if !all.contains(&form) {
            all.push(form);
        }
    }
    // The longest first, so a form that contains another is masked whole.
    all.sort_by_key(|f| std::cmp::Reverse(f.len()));
}

/// `text` with every registered secret, in any of its forms, replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Masks replace whole forms that are ASCII, so what is left of a
        // valid UTF-8 text is still valid; lossy only as a last resort.
        Cow::Owned(bytes) => {
            Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
    }
}

/// [`redact`] for bytes that need not be UTF-8 (a reply body as it came).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let forms = FORMS.read().unwrap_or_else(|e| e.into_inner());
    let mut out: Cow<'_, [u8]> = Cow::Borrowed(bytes);
    for form in forms.iter() {
        if let Some(replaced) = replace_all(&out, form) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// [`redact`] on every string of a JSON value, keys included.
pub fn redact_value(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = redact(s) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Object(map) => {
            let masked: serde_json::Map<String, Value> = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    redact_value(&mut v);
                    (redact(&k).into_owned(), v)
                })
                .collect();
            *map = masked;
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn replace_all(hay: &[u8], needle: &[u8]) -> Option<Vec<u8>> {
    let first = find(hay, needle, 0)?;
    let mut out = Vec::with_capacity(hay.len());
    let mut from = 0;
    let mut at = Some(first);
    while let Some(i) = at {
        out.extend_from_slice(&hay[from..i]);
        out.extend_from_slice(MASK.as_bytes());
        from = i + needle.len();
        at = find(hay, needle, from);
    }
    out.extend_from_slice(&hay[from..]);
    Some(out)
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

/// Percent-encoding of everything but the unreserved characters, as a
/// query string or a form would carry the value.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Standard base64 without padding: a prefix of the encoding of any longer
/// text that starts with the value, up to its last whole group.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        // A partial last group's final character depends on what follows
        // in a longer text: it is left out.
        let chars = if chunk.len() == 3 { 4 } else { chunk.len() };
        for i in 0..chars {
            out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    out
}

/// Writes `bytes` (a token, say) to `path` so that only the user can read
/// it: the folder 0700 when it is made, the file 0600 from its creation,
/// then renamed over the old one.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_prints_as_a_mask_and_is_redacted_in_every_form() {
        let s = Secret::new("sk-unit+test/key=1");
        assert_eq!(format!("{s} {s:?}"), "*** ***");
        assert_eq!(s.expose(), "sk-unit+test/key=1");
        let text = format!(
            "sent 'Bearer sk-unit+test/key=1', url sk-unit%2Btest%2Fkey%3D1, b64 {}",
            "c2stdW5pdCt0ZXN0L2tleT0x"
        );
        assert_eq!(redact(&text), "sent 'Bearer ***', url ***, b64 ***");
        assert_eq!(redact_bytes(b"\xff sk-unit+test/key=1 \xfe").as_ref(), b"\xff *** \xfe");
        assert!(matches!(redact("nothing to hide"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_values_are_redacted_in_keys_and_strings() {
        let _s = Secret::new("sk-json-value-key");
        let mut v = serde_json::json!({"a": ["x sk-json-value-key y", 1], "sk-json-value-key": null});
        redact_value(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["x *** y", 1], "***": null}));
    }

    #[test]
    fn base64_leaves_out_what_depends_on_the_next_byte() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TW");
        assert_eq!(base64(b"M"), "T");
    }

    #[test]
    fn short_values_are_not_registered() {
        register("ab");
        assert_eq!(redact("ab cab"), "ab cab");
    }
}
