//! People on a team server: members with a role and groups, the routes that send a tool's calls
//! to a person or a group (with a quorum and escalation), and what a command may ask of a
//! member's role ([`Access`]; each command's is `AnyCommand::access`, beside the table).

use serde::{Deserialize, Serialize};

/// What a member may do, in increasing order: a viewer reads, an approver also decides the
/// items routed to them, an admin also changes settings and members (and decides any item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TeamRole {
    Viewer,
    Approver,
    Admin,
}

impl TeamRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TeamRole::Viewer => "viewer",
            TeamRole::Approver => "approver",
            TeamRole::Admin => "admin",
        }
    }

    /// Whether this role may run a command that needs `access`.
    pub fn may(self, access: Access) -> bool {
        match access {
            // Setting up a team is for a caller who is no member yet.
            Access::Bootstrap => false,
            Access::Read => true,
            Access::Decide => self >= TeamRole::Approver,
            Access::Admin => self == TeamRole::Admin,
        }
    }
}

impl std::str::FromStr for TeamRole {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "viewer" => Ok(TeamRole::Viewer),
            "approver" => Ok(TeamRole::Approver),
            "admin" => Ok(TeamRole::Admin),
            other => Err(format!("no role '{other}'; one of admin, approver, viewer")),
        }
    }
}

/// What a command asks of a member's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Making the first admin of a team that has no member (`team_init`), token-less.
    Bootstrap,
    /// Reading only.
    Read,
    /// Deciding items (approve, deny, edit, answer, delegate).
    Decide,
    /// Changing settings, servers, rules, members, routes; running agents.
    Admin,
}

/// A member of the team server (never their token: only its hash is kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MemberView {
    pub id: String,
    pub name: String,
    pub role: TeamRole,
    pub groups: Vec<String>,
    pub created_at: String,
}

impl MemberView {
    /// Whether an item assigned to `assignee` (`person:NAME` or `group:NAME`) is this member's.
    pub fn is_assignee(&self, assignee: &str) -> bool {
        match Assignee::parse(assignee) {
            Some(Assignee::Person(name)) => name == self.name,
            Some(Assignee::Group(group)) => self.groups.iter().any(|g| g == group),
            None => false,
        }
    }
}

/// A new member with their token, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NewMember {
    pub member: MemberView,
    pub token: String,
}

/// What waits for this desktop's person on their team server (Settings → Team server): the items
/// the server routes to them or their groups, read with their own token (never shown), each
/// decided there. The local engine keeps its own inbox beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TeamInboxView {
    /// The server, as the person gave it: the items are marked with it.
    pub url: String,
    pub items: Vec<crate::InboxItem>,
    /// Why the last read failed (the items are then the last ones read).
    pub error: Option<String>,
}

/// Who an item goes to: one person, or anyone of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignee<'a> {
    Person(&'a str),
    Group(&'a str),
}

impl<'a> Assignee<'a> {
    /// `person:NAME` or `group:NAME`, as stored.
    pub fn parse(text: &'a str) -> Option<Self> {
        if let Some(name) = text.strip_prefix("person:") {
            Some(Assignee::Person(name))
        } else {
            text.strip_prefix("group:").map(Assignee::Group)
        }
    }
}

/// A route: the calls of `server/tool` (`*`: any tool of the server) whose argument at
/// `pointer` matches `pattern` (a glob; none: every call) go to the first of `steps`; after
/// `escalate_after_secs` unanswered, to the next one; after the last, they expire as denied.
/// Each needs `quorum` distinct people's approvals of the same arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RouteView {
    pub id: String,
    pub server: String,
    pub tool: String,
    pub pointer: Option<String>,
    pub pattern: Option<String>,
    /// `person:NAME` or `group:NAME`, in order.
    pub steps: Vec<String>,
    pub quorum: u32,
    pub escalate_after_secs: Option<u64>,
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_allow_in_order_and_nobody_bootstraps_twice() {
        for role in [TeamRole::Viewer, TeamRole::Approver, TeamRole::Admin] {
            assert!(role.may(Access::Read));
            assert!(!role.may(Access::Bootstrap));
        }
        assert!(!TeamRole::Viewer.may(Access::Decide));
        assert!(TeamRole::Approver.may(Access::Decide));
        assert!(!TeamRole::Approver.may(Access::Admin));
        assert!(TeamRole::Admin.may(Access::Admin));
    }

    #[test]
    fn a_member_is_the_assignee_of_their_name_and_groups() {
        let member = MemberView {
            id: "m1".into(),
            name: "ana".into(),
            role: TeamRole::Approver,
            groups: vec!["oncall".into()],
            created_at: String::new(),
        };
        assert!(member.is_assignee("person:ana"));
        assert!(member.is_assignee("group:oncall"));
        assert!(!member.is_assignee("group:ana"));
        assert!(!member.is_assignee("person:oncall"));
        assert!(!member.is_assignee("ana"));
    }
}
