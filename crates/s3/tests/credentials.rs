//! Where an S3 section's credentials come from, in order, and what is said when none are
//! anywhere. One test, as it sets process-wide environment variables.

use fieldstore_core::error::ErrorKind;
use fieldstore_s3::config::S3Config;

fn section(extra: &str) -> S3Config {
    serde_yaml::from_str(&format!("{{bucket: b{extra}}}")).unwrap()
}

fn key_of(config: &S3Config) -> String {
    config.credentials("store").map(|c| c.access_key_id).unwrap_or_else(|e| format!("error: {e}"))
}

#[test]
fn credentials_come_from_the_section_a_profile_or_the_environment_in_that_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials");
    std::fs::write(&file, "[default]\naws_access_key_id = from-default\naws_secret_access_key = s1\n\n[named]\naws_access_key_id = from-named\naws_secret_access_key = s2\naws_session_token = t2\n\n[half]\naws_access_key_id = only-id\n").unwrap();
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] {
        std::env::remove_var(name);
    }
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &file);

    assert_eq!(key_of(&section(", access_key_id: in-section, secret_access_key: s0, profile: named")), "in-section");
    let named = section(", profile: named").credentials("store").unwrap();
    assert_eq!(
        (named.access_key_id.as_str(), named.secret_access_key.expose(), named.session_token.map(|t| t.expose().to_string())),
        ("from-named", "s2", Some("t2".into()))
    );
    assert_eq!(key_of(&section("")), "from-default", "no variables: the default profile");
    std::env::set_var("AWS_PROFILE", "named");
    assert_eq!(key_of(&section("")), "from-named", "AWS_PROFILE");
    std::env::set_var("AWS_ACCESS_KEY_ID", "from-env");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "s3");
    assert_eq!(key_of(&section("")), "from-env", "the variables before AWS_PROFILE's profile");
    assert_eq!(key_of(&section(", profile: named")), "from-named", "a profile the section names before the variables");

    let half = section(", profile: half").credentials("store").unwrap_err();
    assert_eq!(half.kind(), ErrorKind::BadConfig);
    assert!(half.to_string().contains("profile 'half'") && half.to_string().contains("lacks"), "{half}");
    let one_key = section(", access_key_id: x").credentials("store").unwrap_err();
    assert!(one_key.to_string().contains("give both access_key_id and secret_access_key"), "{one_key}");

    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"] {
        std::env::remove_var(name);
    }
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"));
    let none = section("").credentials("store").unwrap_err();
    for place in ["access_key_id", "profile", "AWS_ACCESS_KEY_ID", "profile 'default'"] {
        assert!(none.to_string().contains(place), "{none}");
    }
    let debug = format!("{:?}", section(", access_key_id: x, secret_access_key: very-secret").credentials("store").unwrap());
    assert!(!debug.contains("very-secret"), "{debug}");
}
