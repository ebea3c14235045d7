//! From text to an expression tree.

mod lexer;

pub use lexer::{tokenize, Token};

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Number(f64),
    Variable(String),
    Binary(Box<Expr>, char, Box<Expr>),
    Let(String, Box<Expr>),
}

/// Parse one expression; the whole input must be used.
pub fn parse(source: &str) -> Result<Expr, String> {
    let tokens = tokenize(source)?;
    let mut parser = Parser { tokens, at: 0 };
    let expr = parser.expression()?;
    if parser.at != parser.tokens.len() {
        return Err(format!("unexpected token at {}", parser.at));
    }
    Ok(expr)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn expression(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        while let Some(Token::Op(op @ ('+' | '-'))) = self.tokens.get(self.at).cloned() {
            self.at += 1;
            let right = self.term()?;
            left = Expr::Binary(Box::new(left), op, Box::new(right));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.atom()?;
        while let Some(Token::Op(op @ ('*' | '/'))) = self.tokens.get(self.at).cloned() {
            self.at += 1;
            let right = self.atom()?;
            left = Expr::Binary(Box::new(left), op, Box::new(right));
        }
        Ok(left)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let token = self.tokens.get(self.at).cloned().ok_or("unexpected end of input")?;
        self.at += 1;
        match token {
            Token::Number(n) => Ok(Expr::Number(n)),
            Token::Ident(name) => Ok(Expr::Variable(name)),
            Token::Open => {
                let inner = self.expression()?;
                self.at += 1;
                Ok(inner)
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }
}
