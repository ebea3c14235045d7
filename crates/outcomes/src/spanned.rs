//! A JSON tree that remembers where every key and value starts, so that lint errors in a
//! contracts file can point at the line and column of the offending key.
//!
//! `serde_json` checks the syntax first (its errors are exact and located). That check skips
//! values without building them, which has no depth limit, so the scanner that follows limits
//! nesting itself ([`MAX_DEPTH`], as `serde_json` does when it builds values): its recursion
//! is bounded whatever the input. A small scanner then walks the already-valid text to record
//! positions; string and number tokens are decoded by `serde_json` itself, so escapes and
//! number forms follow RFC 8259 exactly. Duplicate keys are kept (not merged) so the loader can
//! report them.

use serde_json::{Number, Value};

/// How deeply arrays and objects may nest: `serde_json`'s own limit when it builds values, far
/// beyond any contracts file, and small enough that the recursive scan cannot exhaust a stack.
pub const MAX_DEPTH: usize = 128;

/// A 1-based line and column; columns count Unicode scalar values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Spanned>),
    Object(Vec<Member>),
}

/// A value and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub at: Position,
    pub node: Node,
}

/// An object member: its key, where the key starts, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_at: Position,
    pub value: Spanned,
}

/// A syntax error in the JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub at: Position,
    pub message: String,
}

impl Spanned {
    /// The plain JSON value (duplicate keys: the last one wins, as in `serde_json`).
    pub fn to_value(&self) -> Value {
        match &self.node {
            Node::Null => Value::Null,
            Node::Bool(flag) => Value::Bool(*flag),
            Node::Number(number) => Value::Number(number.clone()),
            Node::String(text) => Value::String(text.clone()),
            Node::Array(items) => Value::Array(items.iter().map(Spanned::to_value).collect()),
            Node::Object(members) => {
                Value::Object(members.iter().map(|member| (member.key.clone(), member.value.to_value())).collect())
            }
        }
    }

    /// The JSON kind of the node, for messages.
    pub fn kind(&self) -> &'static str {
        match &self.node {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number(_) => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }
}

/// Parse JSON text into a positioned tree.
pub fn parse(text: &str) -> Result<Spanned, SyntaxError> {
    if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return Err(syntax_error(text, &error));
    }
    let mut scanner =
        Scanner { text, bytes: text.as_bytes(), offset: 0, at: Position { line: 1, column: 1 }, depth: 0 };
    scanner.skip_whitespace();
    let value = scanner.value()?;
    Ok(value)
}

/// `serde_json` reports byte columns; convert to character columns and strip its location suffix.
fn syntax_error(text: &str, error: &serde_json::Error) -> SyntaxError {
    let line = error.line();
    let byte_column = error.column();
    let column = text
        .split('\n')
        .nth(line.saturating_sub(1))
        .map(|line_text| {
            let mut end = byte_column.min(line_text.len());
            while end > 0 && !line_text.is_char_boundary(end) {
                end -= 1;
            }
            line_text.get(..end).map_or(byte_column, |prefix| prefix.chars().count())
        })
        .unwrap_or(byte_column)
        .max(1);
    let full = error.to_string();
    let suffix = format!(" at line {line} column {byte_column}");
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    SyntaxError { at: Position { line: line.max(1), column }, message }
}

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    offset: usize,
    at: Position,
    /// Arrays and objects open around the current position.
    depth: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.offset).copied()
    }

    fn advance(&mut self) {
        if let Some(byte) = self.peek() {
            self.offset += 1;
            if byte == b'\n' {
                self.at.line += 1;
                self.at.column = 1;
            } else if byte & 0b1100_0000 != 0b1000_0000 {
                // Count a character at its first byte only.
                self.at.column += 1;
            }
        }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.advance();
        }
    }

    fn unexpected(&self) -> SyntaxError {
        SyntaxError { at: self.at, message: "unexpected input".into() }
    }

    fn expect(&mut self, byte: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.advance();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn value(&mut self) -> Result<Spanned, SyntaxError> {
        let at = self.at;
        let node = match self.peek() {
            Some(b'{' | b'[') => self.nested()?,
            Some(b'"') => Node::String(self.string()?),
            Some(b't') => self.literal("true", Node::Bool(true))?,
            Some(b'f') => self.literal("false", Node::Bool(false))?,
            Some(b'n') => self.literal("null", Node::Null)?,
            Some(_) => self.number()?,
            None => return Err(self.unexpected()),
        };
        Ok(Spanned { at, node })
    }

    fn literal(&mut self, word: &str, node: Node) -> Result<Node, SyntaxError> {
        for expected in word.bytes() {
            self.expect(expected)?;
        }
        Ok(node)
    }

    fn number(&mut self) -> Result<Node, SyntaxError> {
        let start = self.offset;
        while matches!(self.peek(), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.advance();
        }
        let token = self.text.get(start..self.offset).ok_or_else(|| self.unexpected())?;
        serde_json::from_str::<Number>(token).map(Node::Number).map_err(|_| self.unexpected())
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.offset;
        self.expect(b'"')?;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.advance();
                    break;
                }
                Some(b'\\') => {
                    self.advance();
                    self.advance();
                }
                Some(_) => self.advance(),
                None => return Err(self.unexpected()),
            }
        }
        let token = self.text.get(start..self.offset).ok_or_else(|| self.unexpected())?;
        serde_json::from_str::<String>(token).map_err(|_| self.unexpected())
    }

    /// An array or an object, one level deeper: refused beyond [`MAX_DEPTH`].
    fn nested(&mut self) -> Result<Node, SyntaxError> {
        if self.depth >= MAX_DEPTH {
            return Err(SyntaxError {
                at: self.at,
                message: format!("arrays and objects nest more than {MAX_DEPTH} deep"),
            });
        }
        self.depth += 1;
        let node = if self.peek() == Some(b'{') { self.object() } else { self.array() };
        self.depth -= 1;
        node
    }

    fn array(&mut self) -> Result<Node, SyntaxError> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.advance();
            return Ok(Node::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.advance(),
                Some(b']') => {
                    self.advance();
                    return Ok(Node::Array(items));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn object(&mut self) -> Result<Node, SyntaxError> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.advance();
            return Ok(Node::Object(members));
        }
        loop {
            self.skip_whitespace();
            let key_at = self.at;
            let key = self.string()?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            let value = self.value()?;
            members.push(Member { key, key_at, value });
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.advance(),
                Some(b'}') => {
                    self.advance();
                    return Ok(Node::Object(members));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_key_positions() {
        let tree = parse("{\n  \"a\": [1, {\"é\": true, \"b\": null}]\n}").unwrap();
        let Node::Object(members) = &tree.node else { panic!("object") };
        assert_eq!(members[0].key_at, Position { line: 2, column: 3 });
        let Node::Array(items) = &members[0].value.node else { panic!("array") };
        assert_eq!(items[1].at, Position { line: 2, column: 12 });
        let Node::Object(inner) = &items[1].node else { panic!("object") };
        assert_eq!(inner[1].key, "b");
        assert_eq!(inner[1].key_at, Position { line: 2, column: 24 });
    }

    #[test]
    fn decodes_escapes_and_keeps_duplicates() {
        let tree = parse(r#"{"a\u00e9\n":"x\"y","a\u00e9\n":-1.5e3}"#).unwrap();
        let Node::Object(members) = &tree.node else { panic!("object") };
        assert_eq!(members.len(), 2);
        assert_eq!(members[0].key, "aé\n");
        assert_eq!(members[0].value.node, Node::String("x\"y".into()));
        assert_eq!(tree.to_value(), serde_json::json!({"aé\n": -1500.0}));
    }

    #[test]
    fn syntax_errors_are_located() {
        let error = parse("{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(error.at.line, 3);
        assert_eq!(error.message, "key must be a string");
        let error = parse("[1,\n 2,]").unwrap_err();
        assert_eq!((error.at.line, error.message.as_str()), (2, "expected value"));
        let error = parse("{\"é\": x}").unwrap_err();
        assert_eq!(error.at, Position { line: 1, column: 7 }, "columns count characters, not bytes");
        assert!(parse("").is_err());
        assert!(parse("[1] x").is_err());
    }

    #[test]
    fn nesting_is_limited_and_located() {
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&at_limit).is_ok());
        // Deep enough to overflow the stack of a recursive scan, were it not limited.
        let deep = format!("{{\"tools\":\n{}{}}}", "[".repeat(200_000), "]".repeat(200_000));
        let error = parse(&deep).unwrap_err();
        assert_eq!(error.message, format!("arrays and objects nest more than {MAX_DEPTH} deep"));
        assert_eq!(error.at, Position { line: 2, column: MAX_DEPTH });
    }
}
