use calc::{parse, run, Env, Expr};

#[test]
fn numbers_parse() {
    assert_eq!(parse("42").unwrap(), Expr::Number(42.0));
}

#[test]
fn precedence_holds() {
    let mut env = Env::default();
    assert_eq!(run("1 + 2 * 3", &mut env).unwrap(), 7.0);
}

#[test]
fn division_by_zero_is_an_error() {
    let mut env = Env::default();
    assert!(run("1 / 0", &mut env).is_err());
}
