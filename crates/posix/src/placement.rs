//! Which root a data set's directory is in, when a POSIX catalogue or store spans several: the
//! `spaces:` of a `type: posix` section, FDB5's spaces and `type: select` read as they are
//! (`fieldstore_core::config`). A data set's *space* is the first whose `select` and `regex`
//! take its key; its directory is in the root of that space that holds it, else, for a new
//! data set, in the first root that takes archives and exists (FDB5's `Default` handler).
//!
//! A data set lives in one root. Locations stay relative to it (`dataset-dir/file`), so the
//! store finds a location's root by its directory; a directory found in two roots is refused
//! as a conflict (FDB5 refuses it too), never read from one of them, unless all but one of
//! them were moved away ([`crate::moving`]): while a move switches a data set to another
//! root, the source carries a `moved-away` marker and the copy is the data set. A root's flags
//! (`writable`, `visit`, `archive`, `list`, `retrieve`, `wipe`) lock the actions they deny
//! on the data sets in it, so every path that checks locks honours them, wipe included.
//!
//! ```yaml
//! catalogue:
//!   type: posix
//!   spaces:
//!   - select: class=od              # keyword=regex pairs over the data set key, all must match
//!     roots: [{path: /data/od}, {path: /data/od2, writable: false}]
//!   - regex: ":0001:"               # searched in the data set's values joined by ':'
//!     roots: [{path: /data/test}]
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::{ControlAction, Key};

/// Why a section's `spaces:` are refused: what is wrong, led by the part at fault
/// (`spaces[1].select: ...`), and the regex compiler's error where a pattern does not compile.
#[derive(Debug)]
pub struct SpacesError {
    /// What is wrong, led by where.
    pub message: String,
    /// The regex compiler's error, if that is what is wrong.
    pub cause: Option<regex::Error>,
}

impl SpacesError {
    /// The same error, its message led by `at` (e.g. `spaces[1].`).
    fn at(self, at: &str) -> Self {
        SpacesError { message: format!("{at}{}", self.message), cause: self.cause }
    }
}

impl std::fmt::Display for SpacesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpacesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_ref().map(|cause| cause as _)
    }
}

impl From<String> for SpacesError {
    fn from(message: String) -> Self {
        SpacesError { message, cause: None }
    }
}

impl From<&str> for SpacesError {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

/// One entry of a section's `spaces:`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceConfig {
    /// `keyword=regex` pairs, comma-separated, each searched in the data set key's value of its
    /// keyword; all must match (FDB5's `select:` of a `type: select` entry).
    #[serde(default)]
    pub select: Option<String>,
    /// Data sets the space does not take: any entry whose pairs all match excludes one.
    #[serde(default)]
    pub excludes: Vec<String>,
    /// A regex searched in the data set key's values joined by `:` (FDB5's space `regex:`).
    #[serde(default)]
    pub regex: Option<String>,
    /// How a new data set's root is chosen: `Default` or `First`, the first root that takes
    /// archives and exists (FDB5's other handlers are refused by name).
    #[serde(default)]
    pub handler: Option<String>,
    /// FDB5's name of the space (unused).
    #[serde(default, rename = "name")]
    pub _name: Option<String>,
    /// Spaces of one group (one FDB of FDB5's `type: select`): the first space whose `select`
    /// and `excludes` take a data set chooses its group, and only that group's spaces are
    /// tried by `regex`. Spaces without a group are group 0.
    #[serde(default)]
    pub group: u64,
    /// The space's roots, in order.
    pub roots: Vec<RootConfig>,
}

/// One root of a space, with FDB5's flags: `writable` is the default of `archive` and `wipe`,
/// `visit` of `list` and `retrieve`; all default to true.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootConfig {
    /// The directory holding data set directories.
    pub path: PathBuf,
    /// FDB5's name of the root (unused).
    #[serde(default, rename = "name")]
    pub _name: Option<String>,
    /// Default of `archive` and `wipe`.
    #[serde(default)]
    pub writable: Option<bool>,
    /// Default of `list` and `retrieve`.
    #[serde(default)]
    pub visit: Option<bool>,
    /// Whether fields may be archived into the root's data sets (new data sets go elsewhere).
    #[serde(default)]
    pub archive: Option<bool>,
    /// Whether the root's data sets may be wiped.
    #[serde(default)]
    pub wipe: Option<bool>,
    /// Whether the root's data sets are listed.
    #[serde(default)]
    pub list: Option<bool>,
    /// Whether the root's data sets are retrieved from.
    #[serde(default)]
    pub retrieve: Option<bool>,
}

/// The roots of a catalogue or store and the rules placing data sets in them.
#[derive(Debug)]
pub struct Placement {
    spaces: Vec<Space>,
    /// Whether a root that is not there is made when a data set goes to it (`create: true`);
    /// else it is passed over, and archive fails naming the roots if none is there: a
    /// configured root missing is most often a file system not mounted, whose data must not
    /// go to the local disk instead.
    create: bool,
}

#[derive(Debug)]
struct Space {
    group: u64,
    select: Vec<Condition>,
    excludes: Vec<Vec<Condition>>,
    regex: Option<Regex>,
    roots: Vec<Root>,
}

/// `keyword=regex`: the regex is searched in the key's value of the keyword.
#[derive(Debug)]
struct Condition {
    keyword: String,
    regex: Regex,
}

#[derive(Debug)]
struct Root {
    /// The root as configured: it must exist for new data sets to go to it.
    path: PathBuf,
    /// Where its data set directories are: the root, or the section's subdirectory of it
    /// (made when needed).
    data: PathBuf,
    /// The actions the root's flags deny.
    denied: BTreeSet<ControlAction>,
}

impl Placement {
    /// One root taking every data set, every action allowed.
    pub fn one_root(path: PathBuf) -> Self {
        let root = Root { data: path.clone(), path, denied: BTreeSet::new() };
        let space = Space { group: 0, select: Vec::new(), excludes: Vec::new(), regex: None, roots: vec![root] };
        Placement { spaces: vec![space], create: false }
    }

    /// The same placement, making its roots when a data set goes to one that is not there
    /// (`create: true`; the default store's own root) or not.
    pub fn creating_roots(self, create: bool) -> Self {
        Placement { create, ..self }
    }

    /// Makes every root that is not there (`fieldstore init`), each durably; the roots made.
    pub fn create_roots(&self) -> Result<Vec<String>> {
        let mut made = Vec::new();
        for root in self.spaces.iter().flat_map(|s| &s.roots) {
            let name = root.path.display().to_string();
            if !root.path.is_dir() && !made.contains(&name) {
                crate::listing::create_dir_durably(&root.path)?;
                made.push(name);
            }
            // And its subdirectory of data sets, which readers look for.
            crate::listing::create_dir_durably(&root.data)?;
        }
        Ok(made)
    }

    /// Every root is there; of several, one is enough (FDB5 passes over missing roots).
    pub fn check_exists(&self) -> Result<()> {
        let roots = self.roots();
        let mut first_error = None;
        for root in &roots {
            match std::fs::metadata(root) {
                Ok(_) if roots.len() > 1 => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    first_error = first_error.or(Some(Error::io("find a store at", root, e)))
                }
                Err(e) => return Err(Error::io("find a store at", root, e)),
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The placement `spaces` describe, with data set directories in `subdirectory` of each
    /// root if given; the error names the bad part (`spaces[1].select: ...`).
    pub fn from_spaces(spaces: Vec<SpaceConfig>, subdirectory: Option<&str>) -> std::result::Result<Self, SpacesError> {
        if spaces.is_empty() {
            return Err("spaces: none given (a space has roots: - path: DIR)".into());
        }
        if let Some(name) = subdirectory {
            if name.is_empty() || name.starts_with('.') || name.contains('/') {
                return Err(format!("subdirectory: '{name}' is not one plain directory name").into());
            }
        }
        let spaces: std::result::Result<Vec<Space>, SpacesError> =
            spaces.into_iter().enumerate().map(|(i, s)| Space::new(s, subdirectory).map_err(|e| e.at(&format!("spaces[{i}].")))).collect();
        Ok(Placement { spaces: spaces?, create: false })
    }

    /// Every directory holding data set directories, each once, in order.
    pub fn roots(&self) -> Vec<&Path> {
        let mut roots: Vec<&Path> = Vec::new();
        for root in self.spaces.iter().flat_map(|s| &s.roots) {
            if !roots.contains(&root.data.as_path()) {
                roots.push(&root.data);
            }
        }
        roots
    }

    /// The one root, when there is one and it allows everything: no rule to apply, no
    /// directory to look for.
    fn only_root(&self) -> Option<&Root> {
        match self.spaces.as_slice() {
            [Space { select, excludes, regex: None, roots, .. }] if select.is_empty() && excludes.is_empty() => match roots.as_slice() {
                [root] if root.denied.is_empty() => Some(root),
                _ => None,
            },
            _ => None,
        }
    }

    /// The directory of an existing data set (`dir_name` its name): in the root of its space
    /// that holds it; `None` when none does (or no space takes it).
    pub fn existing(&self, dataset: &Key, dir_name: &str) -> Result<Option<PathBuf>> {
        if let Some(root) = self.only_root() {
            return Ok(Some(root.data.join(dir_name)));
        }
        let Some(space) = self.space_of(dataset)? else { return Ok(None) };
        Ok(space.holding(dataset, dir_name)?.map(|root| root.data.join(dir_name)))
    }

    /// The directory to archive a data set's fields into, and whether the data set was found
    /// there: where it is, else the first root of its space that takes archives and exists
    /// (made first if the placement creates roots). Refused when no space takes the data
    /// set, when its root does not take archives, or when no root does. A directory found
    /// must not be made again if it is gone: the data set moved to another root meanwhile
    /// ([`crate::moving`]), and is to be found again.
    pub fn for_archive(&self, dataset: &Key, dir_name: &str) -> Result<(PathBuf, bool)> {
        if let Some(root) = self.only_root() {
            // One root: nowhere to move to.
            self.ready(root, dataset, std::slice::from_ref(root))?;
            return Ok((root.data.join(dir_name), false));
        }
        let Some(space) = self.space_of(dataset)? else {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("no space of the configuration takes data set {dataset} ({})", colon_values(dataset)),
            ));
        };
        if let Some(root) = space.holding(dataset, dir_name)? {
            if root.denied.contains(&ControlAction::Archive) {
                return Err(Error::new(
                    ErrorKind::Locked,
                    format!("data set {dataset} is in root {}, which takes no archives (writable: false)", root.path.display()),
                ));
            }
            return Ok((root.data.join(dir_name), true));
        }
        // The first root taking archives that is there; with `create`, else the first taking
        // archives (made below).
        let taking = || space.roots.iter().filter(|r| !r.denied.contains(&ControlAction::Archive));
        let writable = taking().find(|r| r.path.is_dir()).or_else(|| taking().next().filter(|_| self.create));
        let root = writable.ok_or_else(|| no_writable_root(dataset, &space.roots))?;
        self.ready(root, dataset, &space.roots)?;
        Ok((root.data.join(dir_name), false))
    }

    /// Checks that `root`, chosen for a new data set among `roots`, is there, making it if the
    /// placement creates roots.
    fn ready(&self, root: &Root, dataset: &Key, roots: &[Root]) -> Result<()> {
        match (root.path.is_dir(), self.create) {
            (true, _) => Ok(()),
            (false, true) => crate::listing::create_dir_durably(&root.path),
            (false, false) => Err(no_writable_root(dataset, roots)),
        }
    }

    /// The actions denied on `dataset`, whose directory is `dir`, by the flags of its root as
    /// its own space lists it (a root two spaces share may carry other flags in each).
    pub fn denied(&self, dataset: &Key, dir: &Path) -> Result<BTreeSet<ControlAction>> {
        if self.only_root().is_some() {
            return Ok(BTreeSet::new());
        }
        let Some(space) = self.space_of(dataset)? else { return Ok(BTreeSet::new()) };
        let root = dir.parent();
        Ok(space.roots.iter().filter(|r| Some(r.data.as_path()) == root).flat_map(|r| r.denied.iter().copied()).collect())
    }

    /// The root holding data set directory `dir_name`, among all roots (a location names the
    /// directory, not the data set); the first root when none does (reads then fail naming
    /// the path).
    pub fn root_holding(&self, dir_name: &str) -> Result<&Path> {
        if dir_name.is_empty() || dir_name.starts_with('.') || dir_name.contains('/') {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("refusing location directory {dir_name:?}: not a data set's directory name"),
            ));
        }
        let roots = self.roots();
        if let [root] = roots.as_slice() {
            return Ok(root);
        }
        let holding = twice_if_nowhere(|| roots.iter().copied().filter(|r| r.join(dir_name).is_dir()).collect());
        match not_moved_away(holding, |r| r.join(dir_name)).as_slice() {
            [] => Ok(roots[0]),
            [root] => Ok(root),
            many => Err(in_several_roots(dir_name, many.iter().copied())),
        }
    }

    /// Where a move of `dataset` (its directory named `dir_name`) takes it: from the root of
    /// its space that holds it to `destination`, which must be another root of that space
    /// (as configured, or its data directory) allowing wipes (FDB5's rule: a data set moved
    /// there can be wiped and moved again). Also every other root of the space holding a
    /// directory of that name: what earlier moves left behind.
    pub fn move_between(&self, dataset: &Key, dir_name: &str, destination: &Path) -> Result<MoveRoots> {
        let Some(space) = self.space_of(dataset)? else {
            return Err(Error::new(ErrorKind::BadRequest, format!("no space of the configuration takes data set {dataset}")));
        };
        let Some(from) = space.holding(dataset, dir_name)? else {
            return Err(Error::new(ErrorKind::NotFound, format!("data set {dataset} is in no root")));
        };
        let wanted = canonical(destination);
        let Some(to) = space.roots.iter().find(|r| canonical(&r.path) == wanted || canonical(&r.data) == wanted) else {
            let roots: Vec<String> = space.roots.iter().map(|r| r.path.display().to_string()).collect();
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!(
                    "{} is no root of the space data set {dataset} is in: move it to one of [{}]",
                    destination.display(),
                    roots.join(", ")
                ),
            ));
        };
        if to.denied.contains(&ControlAction::Wipe) {
            return Err(Error::new(
                ErrorKind::Locked,
                format!(
                    "root {} takes no wipes (writable: false or wipe: false): a data set moved there could not be moved or wiped again",
                    to.path.display()
                ),
            ));
        }
        if !to.path.is_dir() {
            return Err(Error::new(ErrorKind::NotFound, format!("root {} does not exist", to.path.display())));
        }
        let others = space
            .roots
            .iter()
            .filter(|r| r.data != from.data && r.data.join(dir_name).is_dir())
            .map(|r| OtherCopy { root: r.data.clone(), removable: !r.denied.contains(&ControlAction::Wipe) })
            .collect();
        let all = space.roots.iter().map(|r| r.data.clone()).collect();
        Ok(MoveRoots { from: from.data.clone(), from_denied: from.denied.clone(), to: to.data.clone(), others, all })
    }

    /// The directories of `dataset` (named `dir_name`) moved away from roots of its space
    /// and not yet removed (a move killed after its switch): they go with a wipe, or one of
    /// them, alone, would be the data set again.
    pub fn moved_away_copies(&self, dataset: &Key, dir_name: &str) -> Result<Vec<PathBuf>> {
        if self.only_root().is_some() {
            return Ok(Vec::new());
        }
        let Some(space) = self.space_of(dataset)? else { return Ok(Vec::new()) };
        Ok(space.roots.iter().map(|r| r.data.join(dir_name)).filter(|d| d.is_dir() && crate::moving::moved_away(d)).collect())
    }

    /// The space taking `dataset`: the group of the first space whose `select` and `excludes`
    /// take it, then the first space of that group whose `regex` does.
    fn space_of(&self, dataset: &Key) -> Result<Option<&Space>> {
        let values = colon_values(dataset);
        let mut group = None;
        for space in &self.spaces {
            // Spaces of the group before the one choosing it did not select the data set.
            if group.is_some_and(|g| g != space.group) || !space.selects(dataset)? {
                continue;
            }
            group = Some(space.group);
            if space.regex.as_ref().is_none_or(|r| r.is_match(&values)) {
                return Ok(Some(space));
            }
        }
        Ok(None)
    }
}

impl Space {
    fn new(config: SpaceConfig, subdirectory: Option<&str>) -> std::result::Result<Self, SpacesError> {
        match config.handler.as_deref() {
            None | Some("Default" | "First") => {}
            Some(other) => {
                return Err(format!(
                    "handler: '{other}' is not supported (fieldstore places a new data set in the first root that takes archives: Default, First)"
                )
                .into())
            }
        }
        if config.roots.is_empty() {
            return Err("roots: none given (roots: - path: DIR)".into());
        }
        let select = match config.select.as_deref() {
            Some(text) => conditions(text).map_err(|e| e.at("select: "))?,
            None => Vec::new(),
        };
        let excludes = config
            .excludes
            .iter()
            .enumerate()
            .map(|(i, t)| conditions(t).map_err(|e| e.at(&format!("excludes[{i}]: "))))
            .collect::<Result<_, _>>()?;
        let regex = config.regex.as_deref().map(|r| compile(r, "regex")).transpose()?;
        let roots = config
            .roots
            .into_iter()
            .enumerate()
            .map(|(i, r)| Root::new(r, subdirectory).map_err(|e| e.at(&format!("roots[{i}]."))))
            .collect::<Result<_, _>>()?;
        Ok(Space { group: config.group, select, excludes, regex, roots })
    }

    /// Whether the space's `select` and `excludes` take `dataset`.
    fn selects(&self, dataset: &Key) -> Result<bool> {
        let all = |conditions: &[Condition]| -> Result<bool> {
            for c in conditions {
                let Some(value) = dataset.get(&c.keyword) else {
                    // FDB5 selects fields, whose keys hold every level's keywords; fieldstore
                    // places whole data sets, by their own keys only.
                    return Err(Error::new(
                        ErrorKind::BadConfig,
                        format!(
                            "the configuration selects on '{}', which data set {dataset} has not: fieldstore places whole data sets, by the keywords of their own keys",
                            c.keyword
                        ),
                    ));
                };
                if !c.regex.is_match(value) {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        if !all(&self.select)? {
            return Ok(false);
        }
        for exclude in &self.excludes {
            if all(exclude)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The root of this space holding data set directory `dir_name`, if one does.
    fn holding(&self, dataset: &Key, dir_name: &str) -> Result<Option<&Root>> {
        let holding = twice_if_nowhere(|| self.roots.iter().filter(|r| r.data.join(dir_name).is_dir()).collect());
        match not_moved_away(holding, |r| r.data.join(dir_name)).as_slice() {
            [] => Ok(None),
            [root] => Ok(Some(root)),
            many => Err(in_several_roots(&format!("data set {dataset}"), many.iter().map(|r| r.data.as_path()))),
        }
    }
}

impl Root {
    fn new(config: RootConfig, subdirectory: Option<&str>) -> std::result::Result<Self, SpacesError> {
        if config.path.as_os_str().is_empty() {
            return Err("path: must not be empty".into());
        }
        let writable = config.writable.unwrap_or(true);
        let visit = config.visit.unwrap_or(true);
        let allowed = [
            (ControlAction::Archive, config.archive.unwrap_or(writable)),
            (ControlAction::Wipe, config.wipe.unwrap_or(writable)),
            (ControlAction::List, config.list.unwrap_or(visit)),
            (ControlAction::Retrieve, config.retrieve.unwrap_or(visit)),
        ];
        let denied = allowed.into_iter().filter(|(_, allowed)| !allowed).map(|(action, _)| action).collect();
        let data = subdirectory.map_or_else(|| config.path.clone(), |s| config.path.join(s));
        Ok(Root { path: config.path, data, denied })
    }
}

/// FDB5's error when no root takes a new data set, naming the roots, and how to make one.
fn no_writable_root(dataset: &Key, roots: &[Root]) -> Error {
    let roots: Vec<String> = roots.iter().map(|r| r.path.display().to_string()).collect();
    Error::new(
        ErrorKind::NotFound,
        format!(
            "No writable roots available for data set {dataset}: none of [{}] takes archives and exists \
             (fieldstore makes no configured root: make it, run `fieldstore init`, or set `create: true`)",
            roots.join(", ")
        ),
    )
}

/// FDB5's selection syntax: `keyword=regex` pairs separated by commas, each keyword once.
fn conditions(text: &str) -> std::result::Result<Vec<Condition>, SpacesError> {
    let mut out: Vec<Condition> = Vec::new();
    for pair in text.split(',') {
        let Some((keyword, pattern)) = pair.split_once('=') else {
            return Err(format!("'{pair}' in '{text}' is no keyword=regex pair").into());
        };
        let keyword = keyword.trim();
        if out.iter().any(|c| c.keyword == keyword) {
            return Err(format!("keyword '{keyword}' twice in '{text}'").into());
        }
        let regex = compile(pattern.trim(), &format!("'{pair}'"))?;
        out.push(Condition { keyword: keyword.to_string(), regex });
    }
    Ok(out)
}

/// `pattern` compiled; a failure is named by `what` (where the pattern was given).
fn compile(pattern: &str, what: &str) -> std::result::Result<Regex, SpacesError> {
    Regex::new(pattern).map_err(|cause| SpacesError { message: what.to_string(), cause: Some(cause) })
}

/// A data set key's values joined by `:`, as FDB5's space regexes see it.
fn colon_values(dataset: &Key) -> String {
    dataset.values().collect::<Vec<_>>().join(":")
}

/// The directories a move took a data set from, and where.
#[derive(Debug)]
pub struct MoveRoots {
    /// The directory of the root holding the data set's directory.
    pub from: PathBuf,
    /// The actions that root's flags deny.
    pub from_denied: BTreeSet<ControlAction>,
    /// The directory of the destination root the data set's directory goes in.
    pub to: PathBuf,
    /// Other roots holding a directory of the data set's name, each moved away (else the
    /// data set would be in several roots): left by a move killed after its switch.
    pub others: Vec<OtherCopy>,
    /// The directories of every root of the space.
    pub all: Vec<PathBuf>,
}

/// The roots `find` finds holding a directory, looked for again if none does: a move puts
/// the data set in its new root before it leaves the old one, but a look at the new root
/// before the move and at the old one after it finds it in neither; a second look, begun
/// after the first ended, finds it in the new one.
pub(crate) fn twice_if_nowhere<T>(find: impl Fn() -> Vec<T>) -> Vec<T> {
    let found = find();
    if found.is_empty() {
        find()
    } else {
        found
    }
}

/// A root holding a moved-away copy of a data set's directory.
#[derive(Debug)]
pub struct OtherCopy {
    /// The root's directory.
    pub root: PathBuf,
    /// Whether its flags allow the copy to be removed (wipe).
    pub removable: bool,
}

/// Of the roots holding a data set's directory (`dir` of each), those whose directory was
/// not moved away; all of them when every one was (a move killed before its switch leaves
/// the marker in the one place the data set is).
fn not_moved_away<T: Copy>(holding: Vec<T>, dir: impl Fn(T) -> PathBuf) -> Vec<T> {
    if holding.len() < 2 {
        return holding;
    }
    let kept: Vec<T> = holding.iter().copied().filter(|r| !crate::moving::moved_away(&dir(*r))).collect();
    if kept.is_empty() {
        holding
    } else {
        kept
    }
}

/// A path as the file system resolves it, for comparing roots; as given where it cannot be
/// resolved (a root that does not exist).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn in_several_roots<'a>(what: &str, roots: impl Iterator<Item = &'a Path>) -> Error {
    let roots: Vec<String> = roots.map(|r| r.display().to_string()).collect();
    Error::new(ErrorKind::Conflict, format!("{what} is in several roots ({}): remove all copies but one", roots.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spaces(yaml: &str) -> std::result::Result<Placement, SpacesError> {
        let configs: Vec<SpaceConfig> = serde_yaml::from_str(yaml).unwrap();
        Placement::from_spaces(configs, None)
    }

    fn dataset(class: &str, expver: &str) -> Key {
        Key::from_pairs([("class", class), ("expver", expver), ("stream", "oper")])
    }

    #[test]
    fn the_first_space_taking_a_data_set_places_it_in_its_first_writable_root() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c, missing] = ["a", "b", "c", "missing"].map(|n| dir.path().join(n));
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).unwrap();
        }
        let yaml = format!(
            "- select: class=od|rd\n  excludes: [expver=0002]\n  roots: [{{path: {}}}, {{path: {}, writable: false}}]\n- regex: ':0002:'\n  roots: [{{path: {}}}, {{path: {}}}]\n",
            a.display(),
            b.display(),
            missing.display(),
            c.display(),
        );
        let placement = spaces(&yaml).unwrap();
        let name = "n";
        assert_eq!(placement.for_archive(&dataset("od", "0001"), name).unwrap().0, a.join(name));
        assert_eq!(placement.for_archive(&dataset("rd", "0001"), name).unwrap().0, a.join(name));
        // Excluded from the first space, taken by the second's regex: its first root is missing.
        assert_eq!(placement.for_archive(&dataset("od", "0002"), name).unwrap().0, c.join(name));
        let err = placement.for_archive(&dataset("mc", "0001"), name).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BadRequest);
        assert!(err.to_string().contains("no space") && err.to_string().contains("mc:0001:oper"), "{err}");
        // An existing data set stays where it is; in a root without archives, it is locked.
        std::fs::create_dir(b.join("old")).unwrap();
        let err = placement.for_archive(&dataset("od", "0001"), "old").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked, "{err}");
        assert_eq!(placement.existing(&dataset("od", "0001"), "old").unwrap(), Some(b.join("old")));
        assert_eq!(
            placement.denied(&dataset("od", "0001"), &b.join("old")).unwrap(),
            BTreeSet::from([ControlAction::Archive, ControlAction::Wipe])
        );
        assert_eq!(placement.existing(&dataset("od", "0001"), "none").unwrap(), None);
        // In two roots: a conflict, for the catalogue and the store alike.
        std::fs::create_dir(a.join("old")).unwrap();
        assert_eq!(placement.existing(&dataset("od", "0001"), "old").unwrap_err().kind(), ErrorKind::Conflict);
        assert_eq!(placement.root_holding("old").unwrap_err().kind(), ErrorKind::Conflict);
        assert_eq!(placement.root_holding("n").unwrap(), a.as_path());
    }

    #[test]
    fn a_root_two_spaces_share_carries_each_space_s_own_flags() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        let yaml = format!(
            "- select: class=od\n  roots: [{{path: {0}, writable: false}}]\n- select: class=rd\n  roots: [{{path: {0}}}]\n",
            shared.display()
        );
        let placement = spaces(&yaml).unwrap();
        let (od, rd) = (dataset("od", "0001"), dataset("rd", "0001"));
        assert_eq!(placement.denied(&od, &shared.join("od")).unwrap(), BTreeSet::from([ControlAction::Archive, ControlAction::Wipe]));
        assert_eq!(placement.denied(&rd, &shared.join("rd")).unwrap(), BTreeSet::new());
        assert_eq!(placement.for_archive(&rd, "rd").unwrap().0, shared.join("rd"));
    }

    #[test]
    fn a_group_selecting_a_data_set_owns_it_even_if_none_of_its_spaces_matches() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let yaml = format!(
            "- select: class=od\n  regex: ':oper'\n  group: 0\n  roots: [{{path: {}}}]\n- select: class=.*\n  group: 1\n  roots: [{{path: {}}}]\n",
            a.display(),
            b.display()
        );
        let placement = spaces(&yaml).unwrap();
        let enfo = Key::from_pairs([("class", "od"), ("expver", "0001"), ("stream", "enfo")]);
        let err = placement.for_archive(&enfo, "n").unwrap_err();
        assert!(err.to_string().contains("no space"), "{err}");
        assert_eq!(placement.for_archive(&dataset("rd", "0001"), "n").unwrap().0, b.join("n"));
    }

    #[test]
    fn selecting_on_a_keyword_the_data_set_key_lacks_is_refused_by_name() {
        let placement = spaces("- select: step=12\n  roots: [{path: /x}]\n").unwrap();
        let err = placement.for_archive(&dataset("od", "0001"), "n").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BadConfig);
        assert!(err.to_string().contains("'step'"), "{err}");
    }

    #[test]
    fn bad_spaces_are_refused_naming_the_part() {
        for (yaml, expected) in [
            ("[]", "spaces: none given"),
            ("- roots: []\n", "spaces[0].roots: none given"),
            ("- handler: Expver\n  roots: [{path: /x}]\n", "spaces[0].handler: 'Expver' is not supported"),
            ("- select: class\n  roots: [{path: /x}]\n", "spaces[0].select: 'class' in 'class' is no keyword=regex pair"),
            ("- select: class=od,class=rd\n  roots: [{path: /x}]\n", "keyword 'class' twice"),
            ("- regex: '('\n  roots: [{path: /x}]\n", "spaces[0].regex:"),
            ("- roots: [{path: /x}]\n- excludes: ['a=(']\n  roots: [{path: /y}]\n", "spaces[1].excludes[0]:"),
            ("- roots: [{path: ''}]\n", "spaces[0].roots[0].path: must not be empty"),
        ] {
            let err = fieldstore_core::Report::of(&spaces(yaml).unwrap_err()).to_string();
            assert!(err.contains(expected), "{yaml}: {err}");
        }
    }

    #[test]
    fn a_pattern_that_does_not_compile_keeps_the_regex_error() {
        let err = spaces("- select: class=(\n  roots: [{path: /x}]\n").unwrap_err();
        assert_eq!(err.message, "spaces[0].select: 'class=('");
        assert!(err.cause.is_some_and(|cause| cause.to_string().contains("unclosed group")));
    }
}
