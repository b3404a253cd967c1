use std::io::Read as _;

use fieldstore_core::{FieldStore, Request, Schema};

use super::*;
use crate::config::CommitSetting;
use crate::placement::SpaceConfig;
use crate::{PosixCatalogue, PosixStore};

/// Two roots of one space, `a` then `b` (new data sets go to `a`), and `c` (of no space).
struct Roots {
    _dir: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
    c: PathBuf,
    yaml: String,
}

impl Roots {
    fn new(b_flags: &str) -> Roots {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c] = ["a", "b", "c"].map(|n| dir.path().join(n));
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).unwrap();
        }
        let yaml = format!("- roots: [{{path: {}}}, {{path: {}{b_flags}}}]\n", a.display(), b.display());
        Roots { _dir: dir, a, b, c, yaml }
    }

    fn placement(&self) -> Placement {
        let spaces: Vec<SpaceConfig> = serde_yaml::from_str(&self.yaml).unwrap();
        Placement::from_spaces(spaces, None).unwrap()
    }

    fn store(&self) -> FieldStore {
        let schema = Schema::parse("test", "[ class, expver [ type [ step ]]]").unwrap();
        let catalogue = PosixCatalogue::with_placement(self.placement(), CommitSetting::Auto);
        FieldStore::new(schema, Box::new(catalogue), Box::new(PosixStore::with_placement(self.placement())))
    }

    /// Archives fields of steps 0, 6 and 12 (two flushes) with a handle closed after.
    fn archive(&self) {
        let fs = self.store();
        for (i, step) in ["0", "6", "12"].into_iter().enumerate() {
            fs.archive(&id(step), format!("field {step}").as_bytes()).unwrap();
            if i == 1 {
                fs.flush().unwrap();
            }
        }
        fs.flush().unwrap();
    }

    fn move_to(&self, destination: &Path, keep: bool) -> Result<DatasetMove> {
        let options = MoveOptions { destination: destination.to_path_buf(), keep, delay: Duration::ZERO, threads: 2 };
        move_dataset(&self.placement(), &dataset(), &options, &|_| {})
    }
}

fn dataset() -> Key {
    Key::from_pairs([("class", "od"), ("expver", "0001")])
}

fn id(step: &str) -> Key {
    Key::from_pairs([("class", "od"), ("expver", "0001"), ("type", "an"), ("step", step)])
}

/// Every field of the data set, read through `fs`.
fn read_all(fs: &FieldStore) -> String {
    let (mut reader, why) = fs.retrieve(&Request::parse("class=od,expver=0001,type=an,step=0/6/12").unwrap()).unwrap();
    assert_eq!(why, None);
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    text
}

const ALL: &str = "field 0field 6field 12";

#[test]
fn a_moved_data_set_is_read_from_its_new_root_and_gone_from_the_old() {
    let roots = Roots::new("");
    roots.archive();
    let reader = roots.store();
    assert_eq!(read_all(&reader), ALL);
    let files_before = Snapshot::of(&roots.a.join("od:0001")).unwrap();
    let moved = roots.move_to(&roots.b, false).unwrap();
    assert_eq!(moved.from, roots.a.join("od:0001"));
    assert_eq!(moved.to, roots.b.join("od:0001"));
    assert_eq!((moved.files, moved.bytes), (files_before.files(), files_before.bytes().unwrap()));
    assert!(!moved.already_there && moved.kept.is_none());
    assert_eq!(Snapshot::of(&roots.b.join("od:0001")).unwrap(), files_before, "the same files, the same sizes, no marker");
    assert_eq!(crate::listing::names(&roots.a, "test").unwrap().len(), 0, "nothing left in the old root");
    // A handle opened before the move reads on; a new one too; writers write there.
    assert_eq!(read_all(&reader), ALL);
    assert_eq!(read_all(&roots.store()), ALL);
    let writer = roots.store();
    writer.archive(&id("18"), b"field 18").unwrap();
    writer.flush().unwrap();
    assert!(roots.b.join("od:0001").join("toc").exists() && !roots.a.join("od:0001").exists());
    // Moved again to where it is: nothing to do.
    drop(writer);
    assert!(roots.move_to(&roots.b, false).unwrap().already_there);
}

#[test]
fn keep_leaves_the_source_hidden_in_its_root_and_unread() {
    let roots = Roots::new("");
    roots.archive();
    let before = Snapshot::of(&roots.a.join("od:0001")).unwrap();
    let moved = roots.move_to(&roots.b, true).unwrap();
    let kept = moved.kept.expect("kept");
    assert_eq!(kept.parent(), Some(roots.a.as_path()));
    assert!(kept.file_name().unwrap().to_string_lossy().starts_with(".kept.od:0001="));
    assert_eq!(Snapshot::of(&kept).unwrap(), before);
    assert!(!kept.join(MOVING).exists() && !kept.join(MOVED_AWAY).exists());
    assert_eq!(read_all(&roots.store()), ALL);
}

#[test]
fn a_move_is_refused_where_it_cannot_be_made_naming_why() {
    let roots = Roots::new(", wipe: false");
    roots.archive();
    let err = roots.move_to(&roots.c, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadRequest);
    assert!(err.to_string().contains("no root of the space") && err.to_string().contains(&roots.b.display().to_string()), "{err}");
    let err = roots.move_to(&roots.b, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Locked);
    assert!(err.to_string().contains("takes no wipes"), "{err}");
    // A writer with files open.
    let roots = Roots::new("");
    roots.archive();
    let writer = roots.store();
    writer.archive(&id("18"), b"field 18").unwrap();
    writer.flush().unwrap();
    let err = roots.move_to(&roots.b, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Locked);
    assert!(err.to_string().contains("a writer has") && err.to_string().contains(".data open"), "{err}");
    drop(writer);
    // Refused, it left nothing behind and changed nothing.
    assert!(!roots.a.join("od:0001").join(MOVING).exists());
    assert_eq!(crate::listing::names(&roots.b, "test").unwrap().len(), 0);
    roots.move_to(&roots.b, false).unwrap();
    assert_eq!(read_all(&roots.store()), ALL);
}

#[test]
fn while_a_move_holds_a_data_set_writers_wipes_and_other_moves_are_refused() {
    let roots = Roots::new("");
    roots.archive();
    let dir = roots.a.join("od:0001");
    let lock = MovingLock::take(&dir, "to b by process 1", &dataset()).unwrap();
    let fs = roots.store();
    let err = fs.archive(&id("18"), b"field 18").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Locked);
    let text = fieldstore_core::Report::of(&err).to_string();
    assert!(text.contains("is being moved (to b by process 1): archiving into it is refused"), "{text}");
    let err = fs.wipe(&Request::parse("class=od,expver=0001").unwrap(), true).unwrap_err();
    assert!(err.to_string().contains("wiping it is refused"), "{err}");
    let err = roots.move_to(&roots.b, false).unwrap_err();
    assert!(err.to_string().contains("being moved already"), "{err}");
    // Readers read on; once the mover is gone (killed: its marker stays), writers write.
    assert_eq!(read_all(&fs), ALL);
    drop(lock);
    assert!(dir.join(MOVING).exists());
    fs.archive(&id("18"), b"field 18").unwrap();
    fs.flush().unwrap();
}

#[test]
fn a_copy_not_yet_switched_to_is_not_read_and_a_second_move_removes_it() {
    let roots = Roots::new("");
    roots.archive();
    let source = roots.a.join("od:0001");
    // Killed between the marker and the switch: the copy is hidden, the marker alone.
    let incoming = roots.b.join(".incoming.od:0001=killed");
    std::fs::create_dir(&incoming).unwrap();
    Snapshot::of(&source).unwrap().copy_into(&source, &incoming, 1, &|_| {}).unwrap();
    std::fs::write(source.join(MOVED_AWAY), "to b").unwrap();
    std::fs::write(source.join(MOVING), "to b by process 1").unwrap();
    assert_eq!(read_all(&roots.store()), ALL);
    let moved = roots.move_to(&roots.b, false).unwrap();
    assert!(moved.leftovers_removed.contains(&incoming) && moved.leftovers_removed.contains(&source.join(MOVED_AWAY)), "{moved:?}");
    assert_eq!(crate::listing::names(&roots.b, "test").unwrap(), vec![std::ffi::OsString::from("od:0001")]);
    assert_eq!(read_all(&roots.store()), ALL);
}

#[test]
fn after_the_switch_the_copy_is_read_and_a_second_move_removes_the_source() {
    let roots = Roots::new("");
    roots.archive();
    let source = roots.a.join("od:0001");
    let copy = roots.b.join("od:0001");
    std::fs::create_dir(&copy).unwrap();
    Snapshot::of(&source).unwrap().copy_into(&source, &copy, 1, &|_| {}).unwrap();
    // The copy is told apart by its data: the source's first field changed (same size).
    let data = crate::listing::names(&source, "test").unwrap().into_iter().find(|n| n.to_string_lossy().ends_with(".data")).unwrap();
    let bytes = std::fs::read(source.join(&data)).unwrap();
    std::fs::write(source.join(&data), [b"FIELD".as_slice(), &bytes[5..]].concat()).unwrap();
    // Without a marker, in two roots is a conflict; with one, the copy is the data set.
    let refused = roots.store().retrieve(&Request::parse("class=od,expver=0001").unwrap()).err().expect("a conflict");
    assert_eq!(refused.kind(), ErrorKind::Conflict);
    std::fs::write(source.join(MOVED_AWAY), "to b\nremove\n").unwrap();
    assert_eq!(read_all(&roots.store()), ALL);
    // Run again to another root (here: back to a), the move first removes the old source.
    let moved = roots.move_to(&roots.a, false).unwrap();
    assert_eq!(moved.leftovers_removed, vec![source.clone()]);
    assert_eq!(moved.from, copy);
    assert_eq!(read_all(&roots.store()), ALL);
    assert!(!copy.exists());
}

/// The state a move killed after its switch leaves: the copy in `b` is the data set, the
/// source in `a` moved away (its note saying whether to keep it).
fn switched_but_not_removed(roots: &Roots, note: &str) -> (PathBuf, PathBuf) {
    roots.archive();
    let (source, copy) = (roots.a.join("od:0001"), roots.b.join("od:0001"));
    std::fs::create_dir(&copy).unwrap();
    Snapshot::of(&source).unwrap().copy_into(&source, &copy, 1, &|_| {}).unwrap();
    std::fs::write(source.join(MOVED_AWAY), note).unwrap();
    (source, copy)
}

#[test]
fn a_wipe_takes_the_copies_a_killed_move_left_with_the_data_set() {
    let roots = Roots::new("");
    let (source, copy) = switched_but_not_removed(&roots, "to b\nremove\n");
    let fs = roots.store();
    fs.wipe(&Request::parse("class=od,expver=0001").unwrap(), true).unwrap();
    assert!(!source.exists() && !copy.exists());
    let listed = fs.list(&Request::parse("class=od").unwrap(), fieldstore_core::ListOptions::default()).unwrap();
    assert!(listed.fields.is_empty(), "the moved-away source must not come back");
}

#[test]
fn a_killed_move_s_source_is_kept_where_its_move_or_its_root_says_so() {
    for (flags, note) in [("", "to b\nkeep\n"), (", wipe: false", "to a\nremove\n")] {
        let roots = Roots::new(flags);
        // With wipe: false on b, the data set is moved b -> a: the source left is in b.
        let (left, copy) = if flags.is_empty() {
            switched_but_not_removed(&roots, note)
        } else {
            let (a, b) = switched_but_not_removed(&roots, note);
            std::fs::remove_file(a.join(MOVED_AWAY)).unwrap();
            std::fs::write(b.join(MOVED_AWAY), note).unwrap();
            (b, a)
        };
        let moved = roots.move_to(copy.parent().unwrap(), false).unwrap();
        assert!(moved.already_there && moved.leftovers_removed.is_empty(), "{flags}: {moved:?}");
        let [kept] = moved.leftovers_kept.as_slice() else { panic!("{flags}: {moved:?}") };
        assert_eq!(kept.parent(), left.parent());
        assert!(kept.join("toc").exists() && !kept.join(MOVED_AWAY).exists() && !left.exists(), "{flags}");
        assert!(!copy.join(MOVING).exists(), "{flags}: the move's own marker goes");
        assert_eq!(read_all(&roots.store()), ALL);
    }
}

#[test]
fn a_wipe_or_purge_under_way_stops_a_move_and_a_move_under_way_stops_them() {
    let roots = Roots::new("");
    roots.archive();
    let dir = roots.a.join("od:0001");
    let held = hold_for_change(&dir, "wiping it").unwrap();
    let err = roots.move_to(&roots.b, false).unwrap_err();
    assert!(err.to_string().contains("is being wiped or purged"), "{err}");
    assert!(!dir.join(MOVING).exists() && crate::listing::names(&roots.b, "test").unwrap().is_empty());
    drop(held);
    let copying = lock_directory(&dir, libc::LOCK_EX).unwrap();
    let err = hold_for_change(&dir, "wiping it").unwrap_err();
    assert!(fieldstore_core::Report::of(&err).to_string().contains("is being moved: wiping it is refused"), "{err}");
    drop(copying);
    roots.move_to(&roots.b, false).unwrap();
}

#[test]
fn a_writer_whose_directory_moved_is_told_where_it_went() {
    let roots = Roots::new("");
    roots.archive();
    roots.move_to(&roots.b, false).unwrap();
    let old = roots.a.join("od:0001");
    let err = gone_under_writer(&roots.placement(), &dataset(), Some(&old));
    assert!(err.is_wiped(), "the writer forgets what it wrote there");
    let text = fieldstore_core::Report::of(&err).to_string();
    assert!(text.contains(&format!("was moved to {}", roots.b.join("od:0001").display())), "{text}");
    // Gone from every root: wiped.
    roots.store().wipe(&Request::parse("class=od,expver=0001").unwrap(), true).unwrap();
    assert!(matches!(gone_under_writer(&roots.placement(), &dataset(), Some(&old)), Error::Wiped { .. }));
}
