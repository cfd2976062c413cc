//! What a replica keeps of a 2025-11-25 session in the shared state, and whose it is.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::server::replicas::SelectionWire;
use crate::tool::Identity;

/// What a replica keeps of a 2025-11-25 session: enough to serve its next request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRecord {
    pub(crate) protocol_version: String,
    pub(crate) client_info: Value,
    pub(crate) capabilities: Value,
    /// The minimum log level (`u8::MAX`: none set).
    pub(crate) log_level: u8,
    pub(crate) selection: SelectionWire,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) subscriptions: Vec<String>,
    /// Who the session belongs to (the authenticated subject), if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subject: Option<String>,
    /// The OAuth client the subject came through: a session is its subject's through that
    /// client (its tokens' scopes may change, stepped up; who it is may not). Written for
    /// every session with a subject (`null`: the token named no client). Absent (`None`):
    /// the record comes from a replica of a version that kept no client, so, while a rolling
    /// upgrade runs, the session is taken up by its subject alone, as that replica did.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) client_id: Option<Option<String>>,
    /// The session's random name (it owns the tasks of an unauthenticated session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nonce: Option<String>,
}

impl SessionRecord {
    /// Whether the session is `identity`'s to use: the same subject through the same client
    /// (see [`SessionRecord::client_id`] for a record that names no client at all).
    pub(crate) fn belongs_to(&self, identity: Option<&Identity>) -> bool {
        match (self.subject.as_deref(), identity) {
            (None, None) => true,
            (Some(subject), Some(identity)) => {
                subject == identity.subject
                    && self
                        .client_id
                        .as_ref()
                        .is_none_or(|client| *client == identity.client_id)
            }
            _ => false,
        }
    }
}

/// Reads a field that may be `null` as `Some(None)`, so that a missing one (the field's
/// `default`, `None`) stays apart from it.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(text: &str) -> SessionRecord {
        let base = r#"{"protocolVersion":"2025-11-25","clientInfo":{},"capabilities":{},"logLevel":255,"selection":{}"#;
        serde_json::from_str(&format!("{base}{text}}}")).unwrap()
    }

    fn who(subject: &str, client: Option<&str>) -> Identity {
        Identity {
            client_id: client.map(Into::into),
            ..Identity::new(subject, ["read"])
        }
    }

    #[test]
    fn a_record_belongs_to_its_subject_through_its_client_and_an_older_one_to_its_subject() {
        let through = record(r#","subject":"ann","clientId":"app""#);
        assert!(through.belongs_to(Some(&who("ann", Some("app")))));
        assert!(!through.belongs_to(Some(&who("ann", Some("other")))));
        assert!(!through.belongs_to(Some(&who("ann", None))));
        assert!(!through.belongs_to(Some(&who("bob", Some("app")))));
        assert!(!through.belongs_to(None));
        let no_client = record(r#","subject":"ann","clientId":null"#);
        assert!(no_client.belongs_to(Some(&who("ann", None))));
        assert!(!no_client.belongs_to(Some(&who("ann", Some("app")))));
        // Written by a replica that kept no client: its subject decides, as it did there.
        let older = record(r#","subject":"ann""#);
        assert!(older.belongs_to(Some(&who("ann", Some("app")))));
        assert!(!older.belongs_to(Some(&who("bob", Some("app")))));
        let anonymous = record("");
        assert!(anonymous.belongs_to(None));
        assert!(!anonymous.belongs_to(Some(&who("ann", None))));
    }

    #[test]
    fn a_record_names_its_client_even_when_the_token_named_none() {
        let mut r = record(r#","subject":"ann","clientId":null"#);
        assert!(
            serde_json::to_string(&r)
                .unwrap()
                .contains(r#""clientId":null"#)
        );
        r.client_id = None;
        assert!(!serde_json::to_string(&r).unwrap().contains("clientId"));
    }
}
