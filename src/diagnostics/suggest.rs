//! "Did you mean ...?": the known name closest to a misspelt one.
//!
//! Every diagnostic that suggests a name calls [`did_you_mean`] (or [`closest_within`] for a
//! fixed distance), so the rules are the same everywhere and the cost is bounded whatever the
//! input: a name longer than [`MAX_NAME_CHARS`] is no typo of a known name; a candidate whose
//! length is too far from the name's is skipped before any comparison; the edit distance is
//! computed only in the band of cells that can stay within the limit, and stops as soon as no
//! cell can; and a set of more than [`MAX_CANDIDATES`] names gets no suggestion (those sets come
//! from user input, and a suggestion must not depend on which of them were looked at).
//! The result is the suggested name itself, so a caller can build a replacement from it.

/// Names longer than this (in characters) get no suggestion.
pub const MAX_NAME_CHARS: usize = 128;
/// A candidate set larger than this gets no suggestion. The largest real set is PyTorch's
/// operator names, about 2,000.
pub const MAX_CANDIDATES: usize = 8192;

/// The closest candidate by edit distance (case-insensitive, a swap of two neighbouring
/// characters counting as one edit) if it is close enough to be a likely typo: at most one
/// edit per three characters, between one and three. Ties go to the smallest name.
pub fn did_you_mean<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<String> {
    let len = name.chars().take(MAX_NAME_CHARS + 1).count();
    if len < 2 {
        return None;
    }
    let limit = (len / 3).clamp(1, 3);
    closest_within(name, candidates.into_iter().filter(|c| *c != name && c.chars().nth(1).is_some()), limit)
        .map(str::to_string)
}

/// The candidate at the smallest edit distance from `name`, if it is at most `limit`.
pub fn closest_within<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>, limit: usize) -> Option<&'c str> {
    let name: Vec<char> = name.chars().take(MAX_NAME_CHARS + 1).flat_map(char::to_lowercase).collect();
    if name.len() > MAX_NAME_CHARS {
        return None;
    }
    let mut seen = 0;
    let mut best: Option<(usize, &str)> = None;
    let mut other = Vec::new();
    for c in candidates {
        seen += 1;
        if seen > MAX_CANDIDATES {
            return None;
        }
        // The length filter: the distance is at least the difference of the lengths.
        let bound = best.map_or(limit, |(d, _)| d);
        let short = c.chars().take(name.len() + bound + 1).count();
        if short + bound < name.len() || short > name.len() + bound {
            continue;
        }
        other.clear();
        other.extend(c.chars().flat_map(char::to_lowercase));
        if bag_distance(&name, &other) > bound {
            continue;
        }
        if let Some(d) = distance_within(&name, &other, bound) {
            if best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
                best = Some((d, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// A lower bound of the edit distance, in one pass: each edit changes the count of at most one
/// character in each direction, so the characters one has and the other lacks (counted with
/// their repeats) need at least that many edits. ASCII is counted exactly; other characters
/// share one bucket, which only weakens the bound.
fn bag_distance(a: &[char], b: &[char]) -> usize {
    let mut counts = [0i32; 129];
    let bucket = |c: char| (c as usize).min(128);
    a.iter().for_each(|c| counts[bucket(*c)] += 1);
    b.iter().for_each(|c| counts[bucket(*c)] -= 1);
    let (more, fewer) = counts.iter().fold((0, 0), |(m, f), &n| if n > 0 { (m + n, f) } else { (m, f - n) });
    more.max(fewer) as usize
}

/// The edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of
/// neighbours), if it is at most `limit`. Only the cells within `limit` of the diagonal are
/// computed, and the computation stops when a whole row exceeds the limit.
pub fn distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    let width = b.len() + 1;
    let mut prev2 = vec![FAR; width];
    let mut prev: Vec<usize> = (0..width).map(|j| if j <= limit { j } else { FAR }).collect();
    let mut cur = vec![FAR; width];
    for i in 1..=a.len() {
        let (lo, hi) = (i.saturating_sub(limit).max(1), (i + limit).min(b.len()));
        // The rows are reused: only the cells just outside the band are read, so only they
        // are reset (resetting whole rows would make long names quadratic again).
        cur[lo - 1] = if lo == 1 && i <= limit { i } else { FAR };
        if hi < b.len() {
            cur[hi + 1] = FAR;
        }
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()]).filter(|d| *d <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    /// The full table, as the reference the banded one must agree with.
    fn full_distance(a: &[char], b: &[char]) -> usize {
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        d[0] = (0..=b.len()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn the_band_agrees_with_the_full_table() {
        let words =
            ["", "a", "ab", "ba", "abc", "acb", "Add", "Ad", "Sub", "kitten", "sitting", "gelu", "Gelu", "aten"];
        for a in words {
            for b in words {
                let full = full_distance(&chars(a), &chars(b));
                for limit in 0..5 {
                    let banded = distance_within(&chars(a), &chars(b), limit);
                    assert_eq!(banded, Some(full).filter(|d| *d <= limit), "{a:?} {b:?} within {limit}");
                }
            }
        }
    }

    #[test]
    fn the_bag_distance_never_exceeds_the_edit_distance() {
        let words = ["", "a", "ab", "ba", "abc", "acb", "Add", "Ad", "Sub", "kitten", "sitting", "éé", "e"];
        for a in words {
            for b in words {
                assert!(bag_distance(&chars(a), &chars(b)) <= full_distance(&chars(a), &chars(b)), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("Ad", ["Add", "Sub", "Mul"]).as_deref(), Some("Add"));
        assert_eq!(did_you_mean("reul", ["Relu", "Selu"]).as_deref(), Some("Relu"));
        assert_eq!(did_you_mean("Conv", ["Add", "Sub"]), None);
        assert_eq!(did_you_mean("x", ["y"]), None);
        // Ties go to the smallest name, whatever the order of the candidates.
        assert_eq!(did_you_mean("ab", ["ac", "aa"]).as_deref(), Some("aa"));
        assert_eq!(did_you_mean("ab", ["aa", "ac"]).as_deref(), Some("aa"));
    }

    #[test]
    fn long_names_and_huge_candidate_sets_get_no_suggestion() {
        let long = "v".repeat(MAX_NAME_CHARS + 1);
        let near = "v".repeat(MAX_NAME_CHARS);
        assert_eq!(did_you_mean(&long, [near.as_str()]), None);
        let many: Vec<String> = (0..=MAX_CANDIDATES).map(|i| format!("name{i}")).collect();
        assert_eq!(did_you_mean("nmae1", many.iter().map(String::as_str)), None);
        assert_eq!(did_you_mean("nmae1", many[..10].iter().map(String::as_str)).as_deref(), Some("name1"));
    }

    /// A megabyte-long name against a megabyte-long candidate: linear, not a table of 10^12 cells.
    #[test]
    fn a_megabyte_name_is_compared_in_linear_time() {
        let a: Vec<char> = "ab".repeat(500_000).chars().collect();
        let mut b = a.clone();
        b[1000] = 'z';
        assert_eq!(distance_within(&a, &b, 3), Some(1));
        assert_eq!(closest_within(&"a".repeat(1_000_000), ["a"], 3), None);
    }
}
