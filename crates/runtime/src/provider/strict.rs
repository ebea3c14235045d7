//! Reading a provider's reply strictly: JSON with a duplicate key is not read "last value
//! wins" (what `serde_json` does), since then what was recorded and what was acted on could
//! differ from what another reader sees. Every duplicate is reported with where it is, so the
//! answer it touches can be refused.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A key that appears twice in one object: the object's path (keys and indices from the
/// root) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The object's path from the root: keys, and indices written as numbers.
    pub at: Vec<String>,
    /// The repeated key.
    pub key: String,
}

/// The reply, with every duplicate key found (the value kept is the last, as before; callers
/// refuse what a duplicate touches).
pub fn parse_strict(bytes: &[u8]) -> Result<(Value, Vec<Duplicate>), serde_json::Error> {
    let found = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Seed { path: &[], found: &found }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, found.into_inner()))
}

struct Seed<'p, 'f> {
    path: &'p [String],
    found: &'f RefCell<Vec<Duplicate>>,
}

impl Seed<'_, '_> {
    fn child(&self, segment: String) -> Vec<String> {
        let mut path = self.path.to_vec();
        path.push(segment);
        path
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = self.child(items.len().to_string());
            match seq.next_element_seed(Seed { path: &path, found: self.found })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = self.child(key.clone());
            let value = map.next_value_seed(Seed { path: &path, found: self.found })?;
            if object.insert(key.clone(), value).is_some() {
                self.found.borrow_mut().push(Duplicate { at: self.path.to_vec(), key });
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_where_they_are() {
        let (value, found) =
            parse_strict(br#"{"answers":{"ok":{"noul":0.9,"noul":0.1}},"list":[{"a":1,"a":2}],"x":1.5}"#).unwrap();
        assert_eq!(value["answers"]["ok"]["noul"], 0.1);
        assert_eq!(value["x"], 1.5);
        assert_eq!(
            found,
            [
                Duplicate { at: vec!["answers".into(), "ok".into()], key: "noul".into() },
                Duplicate { at: vec!["list".into(), "0".into()], key: "a".into() },
            ]
        );
        let (_, none) = parse_strict(br#"{"a":{"b":[1,2,{"c":null}]},"d":"e"}"#).unwrap();
        assert!(none.is_empty());
        assert!(parse_strict(b"{} x").is_err());
        assert!(parse_strict(br#"{"a":"#).is_err());
    }
}
