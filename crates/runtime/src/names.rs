//! Names as the reference spells them (camelCase) and as this engine does (snake_case).

/// `camelCase` as `snake_case`: each ASCII capital becomes `_` and its lower case
/// (`denyWarnings` → `deny_warnings`, `pickTool` → `pick_tool`); nothing else changes. What the
/// npm package's option names and the reference's node ids have in common with the names
/// every entrance shares.
pub fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capitals_become_underscores_and_nothing_else_changes() {
        assert_eq!(snake_case("denyWarnings"), "deny_warnings");
        assert_eq!(snake_case("pickTool"), "pick_tool");
        assert_eq!(snake_case("timeout_ms"), "timeout_ms");
        assert_eq!(snake_case("maxLine2"), "max_line2");
        assert_eq!(snake_case("Éte"), "Éte");
    }
}
