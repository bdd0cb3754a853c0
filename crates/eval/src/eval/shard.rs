//! A shard of an eval: `--shard I/N` runs tasks I, I+N, I+2N, … of the task
//! list, so N machines (a Kubernetes indexed job, a Slurm array) each run
//! one, and `report` merges their folders (`eval::merge`). Rows keep their
//! place in the whole list and tasks their seed, so the merged rows of a
//! strategy that does not learn are those of one unsharded eval.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Shard `index` of `count`, from 0; `0/1` is the whole task list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 {
            return Err("a task list is split into at least 1 shard (I/N with N ≥ 1)".into());
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist: shards are numbered from 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    pub fn index(self) -> usize {
        self.index
    }

    pub fn count(self) -> usize {
        self.count
    }

    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// For serde's `skip_serializing_if`: an unsharded eval's files do not name a shard.
    pub fn whole(s: &Shard) -> bool {
        s.is_whole()
    }

    /// Whether task `place` (its place in the whole list, from 0) is this shard's.
    pub fn holds(self, place: usize) -> bool {
        place % self.count == self.index
    }

    /// The places of this shard's tasks in a list of `len`, in order.
    pub fn places(self, len: usize) -> Vec<usize> {
        (self.index..len).step_by(self.count).collect()
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("'{s}' is not a shard: write I/N, e.g. 0/4"))?;
        let number = |x: &str, what: &str| {
            x.trim().parse::<usize>().map_err(|_| format!("'{s}': {what} '{x}' is not a whole number (I/N, e.g. 0/4)"))
        };
        Shard::new(number(i, "the shard")?, number(n, "the count")?)
    }
}

impl TryFrom<String> for Shard {
    type Error = String;

    fn try_from(s: String) -> Result<Shard, String> {
        s.parse()
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_list_into_interleaved_parts() {
        let all: Vec<Vec<usize>> = (0..3).map(|i| Shard::new(i, 3).unwrap().places(8)).collect();
        assert_eq!(all, vec![vec![0, 3, 6], vec![1, 4, 7], vec![2, 5]]);
        assert_eq!(Shard::WHOLE.places(3), vec![0, 1, 2]);
        assert!(Shard::new(1, 3).unwrap().holds(4));
        assert!(!Shard::new(1, 3).unwrap().holds(5));
    }

    #[test]
    fn a_bad_shard_says_what_is_wrong() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard::new(2, 4).unwrap());
        for (text, says) in [
            ("4/4", "numbered from 0 to 3"),
            ("0/0", "at least 1 shard"),
            ("a/4", "the shard 'a'"),
            ("3", "write I/N"),
            ("1/-2", "the count '-2'"),
        ] {
            let e = text.parse::<Shard>().unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
