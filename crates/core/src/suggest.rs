//! "Did you mean …?" suggestions by edit distance.

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn did_you_mean<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let length = word.chars().count();
    // Typos are short edits of short names; long words get no suggestion (and no quadratic work).
    if length > 64 {
        return None;
    }
    let limit = (length / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != word && c.chars().count().abs_diff(length) <= limit)
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars, ASCII case differences counting as one edit.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous.get(j).copied().unwrap_or(usize::MAX).saturating_add(usize::from(ca != *cb));
            let deletion = previous.get(j + 1).copied().unwrap_or(usize::MAX).saturating_add(1);
            let insertion = current.get(j).copied().unwrap_or(usize::MAX).saturating_add(1);
            if let Some(slot) = current.get_mut(j + 1) {
                *slot = substitution.min(deletion).min(insertion);
            }
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let actions = ["ask_human", "answer", "auto"];
        assert_eq!(did_you_mean("ask_humam", actions), Some("ask_human"));
        assert_eq!(did_you_mean("zzz", actions), None);
        assert_eq!(did_you_mean("choise", ["choice", "noul"]), Some("choice"));
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
