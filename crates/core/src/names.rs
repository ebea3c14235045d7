//! A set of names that stays cheap for the usual handful (a scan) and linear for
//! pathological inputs (a hash set once it grows).

use std::collections::HashSet;

/// Names kept inline (no allocation) before spilling to a hash set.
const SMALL: usize = 16;

/// String equality that compares the length and the first byte before calling out to a full
/// comparison: most names in a set differ there already.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

#[derive(Debug, Default)]
pub(crate) struct NameSet<'a> {
    small: [&'a str; SMALL],
    len: usize,
    large: Option<HashSet<&'a str>>,
}

impl<'a> NameSet<'a> {
    pub fn new() -> NameSet<'a> {
        NameSet::default()
    }

    fn inline(&self) -> &[&'a str] {
        self.small.get(..self.len).unwrap_or_default()
    }

    pub fn contains(&self, name: &str) -> bool {
        match &self.large {
            Some(set) => set.contains(name),
            None => self.inline().iter().any(|n| same_name(n, name)),
        }
    }

    /// Adds the name; false when it was already there.
    pub fn insert(&mut self, name: &'a str) -> bool {
        if let Some(set) = &mut self.large {
            return set.insert(name);
        }
        if self.inline().iter().any(|n| same_name(n, name)) {
            return false;
        }
        match self.small.get_mut(self.len) {
            Some(slot) => {
                *slot = name;
                self.len += 1;
            }
            None => {
                let mut set: HashSet<&'a str> = self.inline().iter().copied().collect();
                set.insert(name);
                self.large = Some(set);
            }
        }
        true
    }
}

impl<'a> FromIterator<&'a str> for NameSet<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> NameSet<'a> {
        let mut set = NameSet::new();
        for name in iter {
            set.insert(name);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_sets_agree() {
        let names: Vec<String> = (0..100).map(|i| format!("n{}", i % 60)).collect();
        let mut set = NameSet::new();
        let inserted = names.iter().filter(|n| set.insert(n.as_str())).count();
        assert_eq!(inserted, 60);
        assert!(set.contains("n59"));
        assert!(!set.contains("n60"));
        let small: NameSet<'_> = ["a", "b", "a"].into_iter().collect();
        assert!(small.contains("a") && small.contains("b") && !small.contains("c"));
    }
}
