//! Characters to tokens.

/// A token of the expression language.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Number(f64),
    Ident(String),
    Op(char),
    Open,
    Close,
}

/// Split `source` into tokens; whitespace separates and is dropped.
pub fn tokenize(source: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = source.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() || c == '.' {
            let mut text = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit() || **d == '.') {
                text.push(d);
                chars.next();
            }
            tokens.push(Token::Number(text.parse().map_err(|_| format!("bad number {text}"))?));
        } else if c.is_alphabetic() {
            let mut name = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_alphanumeric() || **d == '_') {
                name.push(d);
                chars.next();
            }
            tokens.push(Token::Ident(name));
        } else {
            chars.next();
            tokens.push(match c {
                '(' => Token::Open,
                ')' => Token::Close,
                '+' | '-' | '*' | '/' => Token::Op(c),
                other => return Err(format!("unexpected character {other}")),
            });
        }
    }
    Ok(tokens)
}
