//! Which names name a secret (`password`, `api_key`, `X-Auth-Token`,
//! `clientSecret`, ...), for JSON keys and argument names: the name is
//! split into words (at `_`, `-`, `.`, spaces and camelCase humps) and
//! judged by its last words, so `token_count` and `max_tokens` are not
//! secrets while `access_token` and `AWS_SESSION_TOKEN` are.

/// A last word that makes a name a secret's (`db_password`, `auth`).
const LAST_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "authorization",
    "auth",
    "credential",
    "credentials",
    "cookie",
    "cookies",
    "session",
    "privatekey",
    "secretkey",
    "accesskey",
];

/// Two last words that make a name a secret's (`api_key`, `x-api-key`,
/// `privateKey`, `AWS_SECRET_ACCESS_KEY`).
const LAST_PAIRS: &[&str] = &[
    "apikey",
    "privatekey",
    "secretkey",
    "accesskey",
    "sessionkey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "clientsecret",
];

/// Single words that end with a secret's name (`dbpassword`,
/// `accesstoken`, `APIKEY`).
const SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "secretkey",
    "accesskey",
    "credentials",
    "cookie",
];

/// Last words that say the value is about a password, not the password
/// (`password_length`, `password_policy`).
const ABOUT: &[&str] = &[
    "length", "len", "min", "max", "policy", "rules", "required", "enabled", "expiry", "expires",
    "hint", "label", "field", "type", "changed", "reset", "updated", "at", "count", "strength",
];

/// The words of `name`, lower-cased: `X-Api-Key` -> `x api key`,
/// `clientSecret` -> `client secret`, `APIKey` -> `api key`.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        // A hump: `tS` in `clientSecret`, `IK` of `APIKey` before `ey`.
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if hump && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// True when a value under the key or argument name `name` is a secret
/// whatever it looks like: `password`, `passwd`, `pwd`, `pass`,
/// `passphrase`, `secret`, `client_secret`, `token`, `access_token`,
/// `refresh_token`, `api_key`, `apikey`, `api-key`, `authorization`,
/// `auth`, `credential(s)`, `private_key`, `session`, `cookie`, ...
/// (case-insensitive, any separators, camelCase).
pub fn is_secret_key(name: &str) -> bool {
    let words = words(name);
    let Some(last) = words.last() else {
        return false;
    };
    if LAST_WORDS.contains(&last.as_str()) {
        return true;
    }
    if words.len() >= 2 {
        let pair = format!("{}{}", words[words.len() - 2], last);
        if LAST_PAIRS.contains(&pair.as_str()) {
            return true;
        }
    }
    if words.len() == 1 && SUFFIXES.iter().any(|s| last.ends_with(s)) {
        return true;
    }
    // `password_confirmation`, `new_password_again`: a password word
    // anywhere, unless the name is about the password.
    words.iter().any(|w| {
        matches!(w.as_str(), "password" | "passwd" | "passphrase")
            || (w.len() > 8 && (w.ends_with("password") || w.ends_with("passwd")))
    }) && !ABOUT.contains(&last.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_in_any_spelling() {
        for name in [
            "password",
            "PASSWORD",
            "db_password",
            "dbPassword",
            "DBPASSWORD",
            "passwd",
            "pwd",
            "Pwd",
            "pass",
            "db-pass",
            "passphrase",
            "secret",
            "client_secret",
            "clientSecret",
            "CLIENT-SECRET",
            "token",
            "access_token",
            "refresh_token",
            "refreshToken",
            "X-Auth-Token",
            "AWS_SESSION_TOKEN",
            "accesstoken",
            "api_key",
            "apiKey",
            "APIKey",
            "apikey",
            "APIKEY",
            "api-key",
            "x-api-key",
            "authorization",
            "Proxy-Authorization",
            "auth",
            "basic_auth",
            "credential",
            "credentials",
            "private_key",
            "privateKey",
            "aws_secret_access_key",
            "SecretAccessKey",
            "session",
            "cookie",
            "Set-Cookie",
            "password_confirmation",
            "new.password.again",
        ] {
            assert!(is_secret_key(name), "{name} is a secret's name");
        }
    }

    #[test]
    fn names_that_only_mention_a_secret() {
        for name in [
            "",
            "token_count",
            "max_tokens",
            "tokens",
            "input_tokens",
            "session_id",
            "sessionId",
            "author",
            "authors",
            "bypass",
            "compass",
            "password_length",
            "passwordPolicy",
            "secret_name",
            "token_type",
            "token_url",
            "private_key_id",
            "aws_access_key_id",
            "key",
            "path",
            "user",
            "keyboard",
            "secretary",
        ] {
            assert!(!is_secret_key(name), "{name} is no secret's name");
        }
    }
}
