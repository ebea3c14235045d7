//! What answer validation reads of a JSON value, so that it can read either a
//! `serde_json::Value` (a provider's response) or a value borrowed from the text it was
//! parsed from ([`BorrowedJson`], a recorded answer read from a log line without a map of
//! owned strings being built for it).
//!
//! Both views must answer alike for the same JSON text: a borrowed object keeps one member
//! per key, at the place the key first appears, holding the value it last appears with, as
//! `serde_json::Map` does when it reads a repeated key.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A JSON value as validation reads it.
pub trait JsonView {
    /// The view of an object of such values.
    type Object: ObjectView<Value = Self> + ?Sized;

    /// What kind of value this is, with what validation reads of it.
    fn view(&self) -> Viewed<'_, Self::Object>;
}

/// One JSON value's kind, with its number, text or members.
pub enum Viewed<'a, O: ?Sized> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number, as the `f64` JSON text reads as (`None` where none does).
    Number(Option<f64>),
    /// A string.
    String(&'a str),
    /// An array.
    Array,
    /// An object.
    Object(&'a O),
}

/// A JSON object as validation reads it: its members by key, and in their order.
pub trait ObjectView {
    /// The members' values.
    type Value: JsonView<Object = Self>;

    /// How many members it has.
    fn len(&self) -> usize;

    /// Whether it has no member.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The member named `key`.
    fn get(&self, key: &str) -> Option<&Self::Value>;

    /// Every member, in order.
    fn members(&self) -> impl Iterator<Item = (&str, &Self::Value)>;
}

/// The most members a `serde_json` map is searched by comparing keys rather than by hashing
/// one: an answer has a handful of members, an answer set one per question of a block, and
/// SipHash of a short key costs more than comparing it with each of them.
const SCANNED_MEMBERS: usize = 12;

impl JsonView for Value {
    type Object = Map<String, Value>;

    fn view(&self) -> Viewed<'_, Map<String, Value>> {
        match self {
            Value::Null => Viewed::Null,
            Value::Bool(_) => Viewed::Bool,
            Value::Number(n) => Viewed::Number(n.as_f64()),
            Value::String(s) => Viewed::String(s),
            Value::Array(_) => Viewed::Array,
            Value::Object(map) => Viewed::Object(map),
        }
    }
}

impl ObjectView for Map<String, Value> {
    type Value = Value;

    fn len(&self) -> usize {
        Map::len(self)
    }

    // Found by comparing keys in a small map (see `SCANNED_MEMBERS`). A map's keys are
    // distinct, so the member found is the one `Map::get` finds.
    fn get(&self, key: &str) -> Option<&Value> {
        if Map::len(self) <= SCANNED_MEMBERS {
            self.iter().find_map(|(name, value)| (name == key).then_some(value))
        } else {
            Map::get(self, key)
        }
    }

    fn members(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.iter().map(|(key, value)| (key.as_str(), value))
    }
}

/// A JSON value borrowed from the text it was read from (strings with escapes are decoded
/// into owned text). Read it with `serde_json`, which reads JSON as strictly as it reads a
/// `Value`, and numbers to the same `f64`.
#[derive(Debug, Clone, PartialEq)]
pub enum BorrowedJson<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<BorrowedJson<'a>>),
    /// An object.
    Object(BorrowedObject<'a>),
}

/// A JSON object borrowed from its text: one member per key, at the place the key first
/// appears, holding the value it last appears with (as `serde_json::Map` reads it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BorrowedObject<'a> {
    members: Vec<(Cow<'a, str>, BorrowedJson<'a>)>,
    /// Each key's place, for an object of more than [`COMPARED_KEYS`] members (a smaller one
    /// is searched by comparing keys).
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

/// Up to this many members, a key is found by comparing it with each member's; a larger
/// object indexes its keys, so that a hostile object with many members costs time in
/// proportion to its size.
const COMPARED_KEYS: usize = 16;

/// The prefix of the keys `serde_json` reserves for itself: with some of its features on
/// (`raw_value`, `arbitrary_precision`), an object with such a key is not read as an object
/// into a `Value`. [`BorrowedJson`] refuses such text, so that its reader can read it as a
/// `Value` instead and validate it exactly as before.
const SERDE_JSON_PRIVATE_KEY: &str = "$serde_json::private::";

impl<'a> BorrowedObject<'a> {
    /// An object of `members`, read in order: a repeated key keeps its first place and takes
    /// its last value.
    fn from_members(members: Vec<(Cow<'a, str>, BorrowedJson<'a>)>) -> BorrowedObject<'a> {
        // Most objects are small and repeat no key: kept as read.
        if members.len() <= COMPARED_KEYS
            && !members.iter().enumerate().any(|(i, (key, _))| members.iter().take(i).any(|(seen, _)| seen == key))
        {
            return BorrowedObject { members, index: None };
        }
        let mut index = (members.len() > COMPARED_KEYS).then(|| HashMap::with_capacity(members.len()));
        let mut kept: Vec<(Cow<'a, str>, BorrowedJson<'a>)> = Vec::with_capacity(members.len());
        for (key, value) in members {
            let place = match &index {
                Some(index) => index.get(key.as_ref()).copied(),
                None => kept.iter().position(|(seen, _)| *seen == key),
            };
            match place.and_then(|place| kept.get_mut(place)) {
                Some(member) => member.1 = value,
                None => {
                    if let Some(index) = &mut index {
                        index.insert(key.clone(), kept.len());
                    }
                    kept.push((key, value));
                }
            }
        }
        BorrowedObject { members: kept, index }
    }
}

impl<'a> JsonView for BorrowedJson<'a> {
    type Object = BorrowedObject<'a>;

    fn view(&self) -> Viewed<'_, BorrowedObject<'a>> {
        match self {
            BorrowedJson::Null => Viewed::Null,
            BorrowedJson::Bool(_) => Viewed::Bool,
            BorrowedJson::Number(n) => Viewed::Number(Some(*n)),
            BorrowedJson::String(s) => Viewed::String(s),
            BorrowedJson::Array(_) => Viewed::Array,
            BorrowedJson::Object(object) => Viewed::Object(object),
        }
    }
}

impl<'a> ObjectView for BorrowedObject<'a> {
    type Value = BorrowedJson<'a>;

    fn len(&self) -> usize {
        self.members.len()
    }

    fn get(&self, key: &str) -> Option<&BorrowedJson<'a>> {
        match &self.index {
            Some(index) => index.get(key).and_then(|&place| self.members.get(place)).map(|(_, value)| value),
            None => self.members.iter().find_map(|(name, value)| (name == key).then_some(value)),
        }
    }

    fn members(&self) -> impl Iterator<Item = (&str, &BorrowedJson<'a>)> {
        self.members.iter().map(|(key, value)| (key.as_ref(), value))
    }
}

/// Reads any JSON value, borrowing strings that need no decoding.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = BorrowedJson<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Null)
    }
    fn visit_bool<E>(self, value: bool) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Bool(value))
    }
    // The same conversions as `serde_json::Number::as_f64`.
    fn visit_u64<E>(self, value: u64) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Number(value as f64))
    }
    fn visit_i64<E>(self, value: i64) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Number(value as f64))
    }
    fn visit_f64<E>(self, value: f64) -> Result<Self::Value, E> {
        Ok(BorrowedJson::Number(value))
    }
    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Self::Value, E> {
        Ok(BorrowedJson::String(Cow::Borrowed(value)))
    }
    fn visit_str<E>(self, value: &str) -> Result<Self::Value, E> {
        Ok(BorrowedJson::String(Cow::Owned(value.to_owned())))
    }
    fn visit_string<E>(self, value: String) -> Result<Self::Value, E> {
        Ok(BorrowedJson::String(Cow::Owned(value)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(BorrowedJson::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        ObjectVisitor.visit_map(map).map(BorrowedJson::Object)
    }
}

/// Reads a JSON object, borrowing keys and strings that need no decoding.
struct ObjectVisitor;

/// An object key: borrowed from the text unless it holds an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(value)))
            }
            fn visit_str<E>(self, value: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value.to_owned())))
            }
            fn visit_string<E>(self, value: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = BorrowedObject<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(COMPARED_KEYS));
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key.starts_with(SERDE_JSON_PRIVATE_KEY) {
                return Err(serde::de::Error::custom("a key serde_json reserves"));
            }
            members.push((key, map.next_value::<BorrowedJson<'de>>()?));
        }
        Ok(BorrowedObject::from_members(members))
    }
}

impl<'de> Deserialize<'de> for BorrowedJson<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for BorrowedObject<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn borrowed(text: &str) -> BorrowedObject<'_> {
        serde_json::from_str(text).unwrap()
    }

    fn keys<O: ObjectView>(object: &O) -> Vec<String> {
        object.members().map(|(key, _)| key.to_string()).collect()
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value_as_a_map_does() {
        for text in [
            r#"{"b":1,"a":2,"b":3}"#,
            r#"{"a":1,"a":2,"a":3}"#,
            // Past the compared keys: the indexed path.
            r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":"last","k17":17}"#,
        ] {
            let map: Map<String, Value> = serde_json::from_str(text).unwrap();
            let object = borrowed(text);
            assert_eq!(keys(&object), keys(&map), "{text}");
            for (key, value) in map.iter() {
                let Some(BorrowedJson::Number(_) | BorrowedJson::String(_)) = object.get(key) else {
                    panic!("`{key}` is missing in {text}");
                };
                let expected = value.as_f64().map(BorrowedJson::Number).unwrap_or_else(|| {
                    BorrowedJson::String(Cow::Owned(value.as_str().unwrap_or_default().to_string()))
                });
                assert_eq!(object.get(key), Some(&expected), "{text}");
            }
        }
    }

    #[test]
    fn a_member_is_the_one_get_finds_in_small_and_large_maps() {
        for size in [0, 1, 2, SCANNED_MEMBERS - 1, SCANNED_MEMBERS, SCANNED_MEMBERS + 1, 40] {
            let map: Map<String, Value> = (0..size).map(|i| (format!("k{i}"), serde_json::json!(i))).collect();
            for key in (0..size + 2).map(|i| format!("k{i}")).chain(["".into(), "k".into(), "k00".into()]) {
                assert_eq!(ObjectView::get(&map, &key), map.get(&key), "{key} in {size} members");
            }
            // Found when present, by value, not merely as some member.
            if size > 0 {
                assert_eq!(ObjectView::get(&map, &format!("k{}", size - 1)), Some(&serde_json::json!(size - 1)));
            }
            assert_eq!(ObjectView::get(&map, &format!("k{size}")), None);
        }
    }

    #[test]
    fn a_key_serde_json_reserves_is_refused_at_any_depth() {
        for text in
            [r#"{"$serde_json::private::RawValue":"1"}"#, r#"{"a":{"b":[{"$serde_json::private::Number":"0.5"}]}}"#]
        {
            assert!(serde_json::from_str::<BorrowedObject<'_>>(text).is_err(), "{text}");
        }
        // A key that only looks like one is a key.
        let object = borrowed(r#"{"$serde_json::public":1,"serde_json::private::x":2}"#);
        assert_eq!(object.len(), 2);
    }

    #[test]
    fn a_large_objects_members_are_found_by_its_index() {
        let text = format!("{{{}}}", (0..40).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(","));
        let object = borrowed(&text);
        assert!(object.index.is_some());
        for i in 0..40 {
            assert_eq!(object.get(&format!("k{i}")), Some(&BorrowedJson::Number(f64::from(i))));
        }
        assert_eq!(object.get("k40"), None);
        assert!(borrowed(r#"{"a":1}"#).index.is_none());
    }

    #[test]
    fn distinct_keys_are_kept_in_order() {
        let object = borrowed(r#"{"z":1,"y":{"x":[true,null,"s"]},"w":-2.5e3}"#);
        assert_eq!(keys(&object), ["z", "y", "w"]);
        assert_eq!(object.get("w"), Some(&BorrowedJson::Number(-2500.0)));
        assert_eq!(object.get("v"), None);
    }

    #[test]
    fn strings_without_escapes_are_borrowed_and_escaped_ones_decoded() {
        let object = borrowed(r#"{"plain":"text","esc\u0061ped":"a\"b"}"#);
        assert!(matches!(object.get("plain"), Some(BorrowedJson::String(Cow::Borrowed("text")))));
        assert_eq!(object.get("escaped"), Some(&BorrowedJson::String(Cow::Owned("a\"b".into()))));
    }

    #[test]
    fn numbers_read_as_a_maps_numbers_do() {
        for text in ["0", "-0", "18446744073709551615", "-9223372036854775808", "0.1", "1e-400", "2.5E+10"] {
            let value: Value = serde_json::from_str(text).unwrap();
            let view: BorrowedJson<'_> = serde_json::from_str(text).unwrap();
            let (Viewed::Number(a), Viewed::Number(b)) = (value.view(), view.view()) else {
                panic!("{text} is not a number");
            };
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{text}");
        }
    }

    #[test]
    fn what_a_map_refuses_is_refused() {
        for text in ["[1]", "{\"a\":1e400}", "{\"a\":\"\\ud800\"}", "{\"a\":01}", "{\"a\":1,}", "\"s\""] {
            let map = serde_json::from_str::<Map<String, Value>>(text);
            let object = serde_json::from_str::<BorrowedObject<'_>>(text);
            assert!(map.is_err() && object.is_err(), "{text}: {map:?} / {object:?}");
        }
    }
}
