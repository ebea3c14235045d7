//! The host a contract is checked, framed or asked against, named the same way by every
//! front end: a built-in profile, or a host capability report.

use decision_core::check::Capabilities;
use serde::Deserialize;

use super::error::Error;

/// A built-in host profile, as a request names it (`"reference"`); any other name is refused
/// with the message [`profile`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Profile {
    /// The reference host: 11 state cells, 14 projections, 2 providers, 6 positions,
    /// 14 actions and its seven required blocks.
    Reference,
}

impl Profile {
    /// The profile's name, as requests and `--profile` give it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Reference => "reference",
        }
    }

    /// The profile's capabilities.
    pub fn capabilities(self) -> Capabilities {
        match self {
            Profile::Reference => Capabilities::reference(),
        }
    }
}

impl TryFrom<String> for Profile {
    type Error = String;

    fn try_from(name: String) -> Result<Profile, String> {
        super::named_value("profile", &name, &[(Profile::Reference.name(), Profile::Reference)])
    }
}

/// A built-in host profile by name (only `reference`); any other name is a usage error that
/// lists the known ones.
pub fn profile(name: &str) -> Result<Capabilities, Error> {
    Profile::try_from(name.to_owned()).map(Profile::capabilities).map_err(Error::usage)
}

/// A host capability report's JSON text, named `shown` in messages and as the error's `path`
/// (the file, or the argument that gave it); a report that does not parse is a usage error.
pub fn capabilities(shown: &str, text: &str) -> Result<Capabilities, Error> {
    Capabilities::from_json(text).map_err(|e| Error::usage(format!("{shown}: {e}")).at_path(shown))
}

/// The host a contract is checked, framed or asked against, as every front end names it: a
/// built-in `profile` or a capability `report` (`(shown, text)`); neither is `None`, both a
/// usage error.
pub fn named(profile_name: Option<&str>, report: Option<(&str, &str)>) -> Result<Option<Capabilities>, Error> {
    match (profile_name, report) {
        (Some(_), Some(_)) => Err(Error::usage("give a profile or capabilities, not both")),
        (Some(name), None) => profile(name).map(Some),
        (None, Some((shown, text))) => capabilities(shown, text).map(Some),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_a_profile_or_a_report_never_both() {
        assert!(named(None, None).unwrap().is_none());
        assert!(named(Some("reference"), None).unwrap().is_some());
        let unknown = named(Some("ours"), None).unwrap_err();
        assert_eq!(
            (unknown.code.as_str(), unknown.message.as_str()),
            ("E_USAGE", "unknown profile `ours` (known: reference)")
        );
        let both = named(Some("reference"), Some(("caps.json", "{}"))).unwrap_err();
        assert!(both.message.contains("not both"), "{both:?}");
        let bad = named(None, Some(("caps.json", "not json"))).unwrap_err();
        assert_eq!((bad.code.as_str(), bad.path.as_deref()), ("E_USAGE", Some("caps.json")));
        assert!(bad.message.starts_with("caps.json: "), "{bad:?}");
    }
}
