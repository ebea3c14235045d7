//! Questions on the wire (runtime.md §1.2): `noul`, `choice` and `score`, serialised with the
//! keys in the order `type`, `instructions`, `criteria`.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// One question as sent to the decision model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireQuestion {
    /// Asks for P(true). `criteria` is `(true, false)`; when `None` the key is omitted.
    Noul {
        /// What the model is asked, in words.
        instructions: String,
        /// When the answer is true, and when false.
        criteria: Option<(String, String)>,
    },
    /// Pick one option id; `criteria` maps each offered id to when to pick it, in order.
    Choice {
        /// What the model is asked, in words.
        instructions: String,
        /// `(option id, when to pick it)`, in the order offered.
        criteria: Vec<(String, String)>,
    },
    /// An ordered scale, lowest level first. Level `k` has the id `"k"`.
    Score {
        /// What the model is asked, in words.
        instructions: String,
        /// The description of each level, level 0 first.
        criteria: Vec<String>,
    },
}

impl WireQuestion {
    /// The wire `type`: `"noul"`, `"choice"` or `"score"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            WireQuestion::Noul { .. } => "noul",
            WireQuestion::Choice { .. } => "choice",
            WireQuestion::Score { .. } => "score",
        }
    }

    /// The question's instructions, whatever its type.
    pub fn instructions(&self) -> &str {
        match self {
            WireQuestion::Noul { instructions, .. }
            | WireQuestion::Choice { instructions, .. }
            | WireQuestion::Score { instructions, .. } => instructions,
        }
    }

    /// The ids an answer may name, in order: choice option ids, score level ids `"0"..`,
    /// nothing for a noul.
    pub fn offered_ids(&self) -> Vec<String> {
        match self {
            WireQuestion::Noul { .. } => Vec::new(),
            WireQuestion::Choice { criteria, .. } => criteria.iter().map(|(id, _)| id.clone()).collect(),
            WireQuestion::Score { criteria, .. } => (0..criteria.len()).map(|k| k.to_string()).collect(),
        }
    }

    /// How many options (choice) or levels (score); 2 for a noul.
    pub fn arity(&self) -> usize {
        match self {
            WireQuestion::Noul { .. } => 2,
            WireQuestion::Choice { criteria, .. } => criteria.len(),
            WireQuestion::Score { criteria, .. } => criteria.len(),
        }
    }

    /// The JSON value, keys in wire order.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl Serialize for WireQuestion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let omit_criteria = matches!(self, WireQuestion::Noul { criteria: None, .. });
        let mut map = serializer.serialize_map(Some(if omit_criteria { 2 } else { 3 }))?;
        map.serialize_entry("type", self.type_name())?;
        map.serialize_entry("instructions", self.instructions())?;
        match self {
            WireQuestion::Noul { criteria: Some((yes, no)), .. } => {
                map.serialize_entry("criteria", &OrderedPairs(&[("true", yes.as_str()), ("false", no.as_str())]))?;
            }
            WireQuestion::Noul { criteria: None, .. } => {}
            WireQuestion::Choice { criteria, .. } => map.serialize_entry("criteria", &OrderedMap(criteria))?,
            WireQuestion::Score { criteria, .. } => map.serialize_entry("criteria", criteria)?,
        }
        map.end()
    }
}

struct OrderedPairs<'a>(&'a [(&'a str, &'a str)]);

impl Serialize for OrderedPairs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

struct OrderedMap<'a>(&'a [(String, String)]);

impl Serialize for OrderedMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// An ordered set of questions by id (the `questions` object of a request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Questions(Vec<(String, WireQuestion)>);

impl Questions {
    /// No questions.
    pub fn new() -> Self {
        Questions(Vec::new())
    }

    /// Add a question; returns `false` (and changes nothing) when the id is already present.
    pub fn insert(&mut self, id: impl Into<String>, question: WireQuestion) -> bool {
        let id = id.into();
        if self.get(&id).is_some() {
            return false;
        }
        self.0.push((id, question));
        true
    }

    /// The question with this id; `None` when it is not asked.
    pub fn get(&self, id: &str) -> Option<&WireQuestion> {
        self.0.iter().find(|(qid, _)| qid == id).map(|(_, q)| q)
    }

    /// `(id, question)` pairs, in insertion order (the wire order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &WireQuestion)> {
        self.0.iter().map(|(id, q)| (id.as_str(), q))
    }

    /// The ids, in insertion order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(id, _)| id.as_str())
    }

    /// How many questions there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The JSON object, questions in insertion order.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl Serialize for Questions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (id, q) in &self.0 {
            map.serialize_entry(id, q)?;
        }
        map.end()
    }
}

impl FromIterator<(String, WireQuestion)> for Questions {
    fn from_iter<T: IntoIterator<Item = (String, WireQuestion)>>(iter: T) -> Self {
        let mut questions = Questions::new();
        for (id, q) in iter {
            questions.insert(id, q);
        }
        questions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_is_type_instructions_criteria() {
        let choice = WireQuestion::Choice {
            instructions: "Which?".into(),
            criteria: vec![("list_dir".into(), "l".into()), ("done".into(), "d".into())],
        };
        assert_eq!(
            serde_json::to_string(&choice).unwrap(),
            r#"{"type":"choice","instructions":"Which?","criteria":{"list_dir":"l","done":"d"}}"#
        );
        let noul = WireQuestion::Noul { instructions: "Ok?".into(), criteria: Some(("y".into(), "n".into())) };
        assert_eq!(
            serde_json::to_string(&noul).unwrap(),
            r#"{"type":"noul","instructions":"Ok?","criteria":{"true":"y","false":"n"}}"#
        );
        let bare = WireQuestion::Noul { instructions: "Ok?".into(), criteria: None };
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"type":"noul","instructions":"Ok?"}"#);
        let score = WireQuestion::Score { instructions: "Risk?".into(), criteria: vec!["low".into(), "high".into()] };
        assert_eq!(
            serde_json::to_string(&score).unwrap(),
            r#"{"type":"score","instructions":"Risk?","criteria":["low","high"]}"#
        );
        assert_eq!(score.offered_ids(), ["0", "1"]);
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let mut qs = Questions::new();
        assert!(qs.insert("a", WireQuestion::Noul { instructions: "x".into(), criteria: None }));
        assert!(!qs.insert("a", WireQuestion::Noul { instructions: "y".into(), criteria: None }));
        assert_eq!(qs.len(), 1);
        assert_eq!(qs.get("a").unwrap().instructions(), "x");
    }
}
