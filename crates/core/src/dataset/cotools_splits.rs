//! The four CoTools-format benchmarks as their folders lay them out: where
//! the tool pool and the annotated dev/train texts are, and which question
//! files are test splits, recognised by the names the papers gave them
//! (`test_oh.jsonl`, `test_first_234.jsonl`, `test_unseen_837.jsonl`, …),
//! including the ones a copy of the data leaves out.

use std::path::{Path, PathBuf};

use super::cotools::DataError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoToolsBench {
    FuncQa,
    Gsm8kXl,
    Kamel,
    SimpleToolQuestions,
}

/// A test split found in the folder: its name (the file's stem, which
/// the task file keeps) and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub name: String,
    pub path: PathBuf,
}

/// The splits of a folder, and the known ones it lacks.
#[derive(Clone, Debug, PartialEq)]
pub struct Splits {
    pub found: Vec<Split>,
    pub absent: Vec<&'static str>,
}

impl CoToolsBench {
    pub const ALL: [CoToolsBench; 4] =
        [CoToolsBench::FuncQa, CoToolsBench::Gsm8kXl, CoToolsBench::Kamel, CoToolsBench::SimpleToolQuestions];

    pub fn name(self) -> &'static str {
        match self {
            CoToolsBench::FuncQa => "funcqa",
            CoToolsBench::Gsm8kXl => "gsm8k-xl",
            CoToolsBench::Kamel => "kamel",
            CoToolsBench::SimpleToolQuestions => "simpletoolquestions",
        }
    }

    pub fn from_name(name: &str) -> Option<CoToolsBench> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Whether its tools are arithmetic (else knowledge-base relations).
    pub fn is_math(self) -> bool {
        matches!(self, CoToolsBench::FuncQa | CoToolsBench::Gsm8kXl)
    }

    /// The folders of DIR that hold its files, in the order they are
    /// searched: SimpleToolQuestions keeps the seen-tool files in `seen/`
    /// and the unseen ones in `unseen/` (CoTools' `SimpleToolQuestions` and
    /// `SimpleToolQuestions_unseen`); a flat copy is read too.
    fn folders(self) -> &'static [&'static str] {
        match self {
            CoToolsBench::SimpleToolQuestions => &["seen", "unseen", ""],
            _ => &[""],
        }
    }

    /// The test splits the papers' repository has, main one first.
    pub fn known_splits(self) -> &'static [&'static str] {
        match self {
            CoToolsBench::FuncQa => &["test_oh", "test_mh"],
            CoToolsBench::Gsm8kXl => &["test"],
            CoToolsBench::Kamel => &[
                "test_first_234",
                "test_first_100",
                "test_first_60",
                "test_first_30",
                "test_first_20",
                "test_first_10",
            ],
            CoToolsBench::SimpleToolQuestions => &[
                "test",
                "test_200",
                "test_400",
                "test_600",
                "test_800",
                "test_ex",
                "test_unseen_837",
                "test_unseen_100",
                "test_unseen_200",
                "test_unseen_300",
                "test_unseen_400",
                "test_unseen_500",
                "test_unseen_600",
                "test_unseen_700",
            ],
        }
    }

    /// Whether a file stem names a test split of this benchmark: a known
    /// name, or one of the same families (`test_first_N`, `test_N`,
    /// `test_unseen_N`, `test_*`).
    pub fn is_split(self, stem: &str) -> bool {
        let numbered = |prefix: &str| {
            stem.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        };
        if self.known_splits().contains(&stem) {
            return true;
        }
        match self {
            CoToolsBench::Kamel => numbered("test_first_"),
            CoToolsBench::SimpleToolQuestions => numbered("test_unseen_") || numbered("test_") || stem == "test_ex",
            // FuncQA's one-hop and multi-hop sets, and any further test_* set.
            CoToolsBench::FuncQa | CoToolsBench::Gsm8kXl => {
                stem == "test" || stem.strip_prefix("test_").is_some_and(|s| !s.is_empty())
            }
        }
    }

    /// The tool pool: for SimpleToolQuestions the seen folder's, which
    /// holds every tool (the unseen ones are a subset).
    pub fn tool_file(self, dir: &Path) -> PathBuf {
        self.first_existing(dir, "tool.json").unwrap_or_else(|| dir.join(self.folders()[0]).join("tool.json"))
    }

    /// The annotated texts with their calls: FuncQA's train and dev (one
    /// call each), the others' dev (GSM8K-XL's multi-step chains). Only
    /// the files present.
    pub fn annotated_files(self, dir: &Path) -> Vec<PathBuf> {
        let names: &[&str] = match self {
            CoToolsBench::FuncQa => &["train.jsonl", "dev.jsonl"],
            _ => &["dev.jsonl"],
        };
        names.iter().filter_map(|n| self.first_existing(dir, n)).collect()
    }

    fn first_existing(self, dir: &Path, file: &str) -> Option<PathBuf> {
        self.folders().iter().map(|f| dir.join(f).join(file)).find(|p| p.is_file())
    }

    /// The test splits in `dir`, known ones in the papers' order, then any
    /// other of the same families by name; a split found in two folders is
    /// taken from the first searched.
    pub fn splits(self, dir: &Path) -> Result<Splits, DataError> {
        if !dir.is_dir() {
            return Err(DataError::Format { path: dir.into(), reason: "not a folder".into() });
        }
        let mut found: Vec<Split> = Vec::new();
        for folder in self.folders() {
            let at = dir.join(folder);
            if !at.is_dir() {
                continue;
            }
            let entries = std::fs::read_dir(&at).map_err(|source| DataError::Io { path: at.clone(), source })?;
            let mut here = Vec::new();
            for entry in entries {
                let path = entry.map_err(|source| DataError::Io { path: at.clone(), source })?.path();
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
                let jsonl = path.extension().is_some_and(|e| e == "jsonl");
                if jsonl && path.is_file() && self.is_split(&stem) && !found.iter().any(|s| s.name == stem) {
                    here.push(Split { name: stem, path });
                }
            }
            found.extend(here);
        }
        let known = self.known_splits();
        found.sort_by_key(|s| (known.iter().position(|k| *k == s.name).unwrap_or(known.len()), natural(&s.name)));
        let absent = known.iter().copied().filter(|k| !found.iter().any(|s| s.name == *k)).collect();
        Ok(Splits { found, absent })
    }
}

/// A name's sort key with its digits read as a number, so `test_first_60`
/// comes before `test_first_100`.
fn natural(name: &str) -> (String, u64) {
    let digits: String = name.chars().rev().take_while(char::is_ascii_digit).collect();
    let n = digits.chars().rev().collect::<String>().parse().unwrap_or(0);
    (name[..name.len() - digits.len()].to_owned(), n)
}

impl Splits {
    /// The split a config runs by default: the first known one present
    /// (the papers' main setting comes first), else the first found.
    pub fn main(&self) -> Option<&Split> {
        self.found.first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names_are_recognised_by_family() {
        use CoToolsBench::*;
        assert!(FuncQa.is_split("test_mh") && FuncQa.is_split("test_oh") && !FuncQa.is_split("dev"));
        assert!(Gsm8kXl.is_split("test") && !Gsm8kXl.is_split("train"));
        assert!(Kamel.is_split("test_first_234") && Kamel.is_split("test_first_500"));
        assert!(!Kamel.is_split("test_first_") && !Kamel.is_split("dev") && !Kamel.is_split("test_first_x"));
        for s in ["test", "test_200", "test_ex", "test_unseen_837", "test_unseen_50", "test_1000"] {
            assert!(SimpleToolQuestions.is_split(s), "{s}");
        }
        assert!(!SimpleToolQuestions.is_split("tool") && !SimpleToolQuestions.is_split("test_unseen_"));
        assert_eq!(CoToolsBench::from_name("gsm8k-xl"), Some(Gsm8kXl));
        assert_eq!(CoToolsBench::from_name("gsm8k"), None);
    }

    #[test]
    fn a_folder_gives_its_splits_in_order_and_the_known_ones_it_lacks() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["test_first_60.jsonl", "test_first_100.jsonl", "test_first_500.jsonl", "dev.jsonl", "tool.json"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let s = CoToolsBench::Kamel.splits(dir.path()).unwrap();
        let names: Vec<&str> = s.found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["test_first_100", "test_first_60", "test_first_500"]);
        assert_eq!(s.absent, ["test_first_234", "test_first_30", "test_first_20", "test_first_10"]);
        assert_eq!(s.main().unwrap().name, "test_first_100");

        let stq = tempfile::tempdir().unwrap();
        for f in
            ["seen/test.jsonl", "seen/tool.json", "seen/dev.jsonl", "unseen/test_unseen_837.jsonl", "test_ex.jsonl"]
        {
            let p = stq.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let b = CoToolsBench::SimpleToolQuestions;
        let s = b.splits(stq.path()).unwrap();
        let names: Vec<&str> = s.found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["test", "test_ex", "test_unseen_837"]);
        assert_eq!(b.tool_file(stq.path()), stq.path().join("seen/tool.json"));
        assert_eq!(b.annotated_files(stq.path()), [stq.path().join("seen/dev.jsonl")]);
        assert!(CoToolsBench::FuncQa.splits(&stq.path().join("nope")).is_err());
    }
}
