//! Log arguments: a file as given, a directory walked for its `*.jsonl` files (in name order,
//! symbolic links not followed), so a command can be given a whole fleet of logs at once.

use std::path::PathBuf;

use decision::terminal;

/// The logs `inputs` name, or the message of the first path that cannot be read.
/// A directory without any log is an error, so a mistyped path never passes as an empty fleet.
pub fn expand(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let logs = decision_export::expand_inputs(inputs)
        .map_err(|e| format!("cannot read {}", terminal::one_line(&e.to_string())))?;
    if logs.is_empty() {
        let named: Vec<String> =
            inputs.iter().map(|p| terminal::one_line(&p.display().to_string()).into_owned()).collect();
        return Err(format!("no session logs (*.jsonl) under {}", named.join(", ")));
    }
    Ok(logs)
}
