//! Names a few edits apart: what a "no such tool" error suggests instead.

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Up to three of `names` that contain `name`, are contained in it, or are
/// a few edits away (ignoring case), closest first.
pub fn close_names<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let mut close: Vec<(usize, &str)> = names
        .filter_map(|n| {
            let d = edit_distance(&lower, &n.to_lowercase());
            let related = n.contains(lower.as_str()) || lower.contains(n) || d <= (lower.len() / 3).max(2);
            related.then_some((d, n))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_edits_by_character() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("géo", "geo"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn close_names_are_typos_and_parts_closest_first() {
        let names = ["geo_lookup", "geo_lookup_v2", "weather", "calculator", "lookup"];
        assert_eq!(close_names("geo_lokup", names.into_iter()), ["geo_lookup"]);
        assert_eq!(close_names("lookup", names.into_iter()), ["lookup", "geo_lookup", "geo_lookup_v2"]);
        assert_eq!(close_names("Weathr", names.into_iter()), ["weather"]);
        assert!(close_names("translate", names.into_iter()).is_empty());
        let names = ["calculator", "random_calculator", "geo_lookup", "city_stats"];
        assert_eq!(close_names("calculater", names.into_iter()), ["calculator"]);
        assert!(close_names("zzz", names.into_iter()).is_empty());
    }
}
