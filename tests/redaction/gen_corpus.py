#!/usr/bin/env python3
"""Writes the labelled redaction corpus beside this script:

- secrets.jsonl: one object a line, {"kind", "text", "secrets"}: a text
  holding a realistic fake secret (made-up values in the shapes that
  established secret scanners such as gitleaks and trufflehog describe)
  and the substrings of it that must not survive redaction;
- lookalikes.jsonl: {"kind", "text"}: texts that look like secrets and
  are not (hashes, ids, placeholders, prose and code that name a secret
  without a value, card-like numbers failing the Luhn check, ...); they
  must pass unchanged.

Deterministic (a fixed seed, no clock): running it again writes the same
files. Run: python3 tests/redaction/gen_corpus.py
"""

import base64
import json
import os
import random
import string

R = random.Random(38)
ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def rand(chars, n):
    return "".join(R.choice(chars) for _ in range(n))


def mixed(chars, n):
    """A random string with a digit, a capital and a small letter."""
    while True:
        s = rand(chars, n)
        if any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s):
            return s


def luhn_ok(digits):
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = int(d)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card(prefix, length):
    body = prefix + rand(string.digits, length - len(prefix) - 1)
    for check in string.digits:
        if luhn_ok(body + check):
            return body + check


def group(number, sizes, sep):
    out, i = [], 0
    for s in sizes:
        out.append(number[i:i + s])
        i += s
    return sep.join(out)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


CONTEXTS = [
    "{}",
    "use {} for the call",
    "export VALUE=\"{}\"",
    "the key is {}.",
    "(tool/call {{:x \"{}\"}})",
    "{{\"value\": \"{}\"}}",
    "curl -H 'X-Thing: {}' https://api.example.com",
    "line one\nline two {} line three",
]

secrets = []


def add(kind, secret, text=None, extra=None):
    if text is None:
        text = R.choice(CONTEXTS).format(secret)
    secrets.append({"kind": kind, "text": text, "secrets": [secret] + (extra or [])})


for _ in range(8):
    add("openai-key", "sk-" + mixed(ALNUM, 20) + "T3BlbkFJ" + mixed(ALNUM, 20))
    add("openai-key", "sk-proj-" + mixed(URLSAFE, R.randint(80, 140)))
    add("openai-key", "sk-svcacct-" + mixed(URLSAFE, 60))
    add("anthropic-key", "sk-ant-api03-" + mixed(URLSAFE, 93) + "AA")
    add("stripe-key", R.choice(["sk_live_", "rk_live_", "sk_test_", "rk_test_"]) + mixed(ALNUM, R.choice([24, 34, 99])))
    add("stripe-webhook-secret", "whsec_" + mixed(ALNUM, 32))
    add("google-api-key", "AIza" + mixed(URLSAFE, 35))
    add("google-oauth-secret", "GOCSPX-" + mixed(URLSAFE, 28))
    add("google-oauth-token", "ya29." + mixed(URLSAFE, 120))
    add("github-token", R.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + mixed(ALNUM, 36))
    add("github-fine-grained", "github_pat_" + mixed(ALNUM, 22) + "_" + mixed(ALNUM, 59))
    add("gitlab-token", R.choice(["glpat-", "gldt-", "glrt-"]) + mixed(URLSAFE, 20))
    add("slack-token", R.choice(["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"])
        + rand(string.digits, 12) + "-" + rand(string.digits, 13) + "-" + mixed(ALNUM, 24))
    hook = "T" + rand(UPPER_NUM, 10) + "/B" + rand(UPPER_NUM, 10) + "/" + mixed(ALNUM, 24)
    add("slack-webhook", hook, text="post to https://hooks.slack.com/services/" + hook + " now")
    add("aws-access-key-id", R.choice(["AKIA", "ASIA"]) + rand(UPPER_NUM, 16))
    aws_secret = mixed(B64, 40)
    add("aws-secret-access-key", aws_secret, text=R.choice([
        "aws_secret_access_key = {}", "AWS_SECRET_ACCESS_KEY={} aws s3 ls",
        "{{\"SecretAccessKey\": \"{}\"}}", "secret_access_key: {}"]).format(aws_secret))
    header = b64url(json.dumps({"alg": R.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rand(string.digits, 10), "iat": R.randint(1500000000, 1800000000)}).encode())
    sig = b64url(bytes(R.randrange(256) for _ in range(32)))
    add("jwt", header + "." + payload + "." + sig, extra=[sig])
    add("npm-token", "npm_" + mixed(ALNUM, 36))
    add("pypi-token", "pypi-AgEIcHlwaS5vcmc" + mixed(URLSAFE, 60))
    add("sendgrid-key", "SG." + mixed(URLSAFE, 22) + "." + mixed(URLSAFE, 43))
    add("huggingface-token", "hf_" + mixed(ALNUM, 34))

for kind, label in [("RSA", "RSA PRIVATE KEY"), ("EC", "EC PRIVATE KEY"), ("PKCS8", "PRIVATE KEY"),
                    ("OPENSSH", "OPENSSH PRIVATE KEY"), ("ENCRYPTED", "ENCRYPTED PRIVATE KEY"),
                    ("PGP", "PGP PRIVATE KEY BLOCK"), ("RSA", "RSA PRIVATE KEY"), ("EC", "EC PRIVATE KEY")]:
    lines = [rand(B64, 64) for _ in range(R.randint(2, 6))] + [rand(B64, 20) + "=="]
    block = "-----BEGIN " + label + "-----\n" + "\n".join(lines) + "\n-----END " + label + "-----"
    add("private-key-block", lines[0], text="key:\n" + block + "\ndone", extra=lines[1:])

for _ in range(8):
    token = mixed(ALNUM + "-._~", R.randint(20, 40))
    add("bearer-header", token, text=R.choice(["Authorization: Bearer {}", "curl -H 'authorization: bearer {}' x",
                                                "{{\"Authorization\": \"Bearer {}\"}}"]).format(token))
    cred = base64.b64encode((rand(string.ascii_lowercase, 5) + ":" + mixed(ALNUM, 12)).encode()).decode()
    add("basic-header", cred, text=R.choice(["Authorization: Basic {}", "-H \"Authorization: Basic {}\""]).format(cred))
    pw = mixed(ALNUM + "!$%*+._~-", R.randint(8, 20))
    add("url-password", pw, text="{}://{}:{}@{}.internal:5432/app".format(
        R.choice(["postgres", "https", "redis", "mongodb+srv", "amqp"]), rand(string.ascii_lowercase, 6), pw,
        rand(string.ascii_lowercase, 6)))

for _ in range(12):
    local = rand(string.ascii_lowercase, R.randint(3, 8)) + R.choice(["", ".", "_", "+"]) + rand(string.ascii_lowercase, 4)
    mail = local + "@" + R.choice(["example.com", "mail.example.org", "corp.example.co.uk", "gmail.com"])
    add("email", mail, text=R.choice(["contact {} today", "mailto:{}", "\"email\": \"{}\"", "From: Ann <{}>"]).format(mail))

for prefix, length, sizes in [("4", 16, [4, 4, 4, 4]), ("51", 16, [4, 4, 4, 4]), ("2221", 16, [4, 4, 4, 4]),
                              ("37", 15, [4, 6, 5]), ("6011", 16, [4, 4, 4, 4]), ("35", 16, [4, 4, 4, 4]),
                              ("4", 13, [13]), ("4", 19, [4, 4, 4, 4, 3]), ("36", 14, [4, 6, 4])]:
    for sep in [" ", "-", ""]:
        number = card(prefix, length)
        shown = group(number, sizes, sep) if sep else number
        add("card-number", shown, text=R.choice(["card {} exp 12/29", "pay with {}.", "\"pan\": \"{}\""]).format(shown),
            extra=[number[-8:]] if sep == "" else [])

NAMES = ["password", "passwd", "pwd", "secret", "token", "access_token", "refresh_token", "api_key", "apikey",
         "api-key", "authorization", "auth", "credential", "credentials", "private_key", "client_secret",
         "session", "cookie", "db_password", "DB_PASS", "clientSecret", "X-Auth-Token", "passphrase",
         "AWS_SESSION_TOKEN"]
VALUE_CHARS = ALNUM + "!@#$%^&*()_+=./~-"
for i, name in enumerate(NAMES * 2):
    value = R.choice(["X&3", "", ""]) or mixed(VALUE_CHARS, R.randint(6, 24)).replace("\\", "")
    form = i % 6
    if form == 0:
        text = "{}: {}".format(name, value)
    elif form == 1:
        text = "set {}={} then run".format(name, value.replace("&", "x").replace(";", "x"))
        value = value.replace("&", "x").replace(";", "x")
    elif form == 2:
        text = json.dumps({"user": "ann", name: value})
    elif form == 3:
        text = "{}:\n  {}: '{}'\n  host: db".format("config", name, value.replace("'", ""))
        value = value.replace("'", "")
    elif form == 4:
        phrase = " ".join(rand(string.ascii_lowercase, R.randint(4, 7)) for _ in range(4))
        text = "{} = {}\nnext = 1".format(name, phrase)
        value = phrase
    else:
        text = json.dumps({"name": "login", "arguments": json.dumps({name: value, "retry": 2})})
    if name in ("pwd",) and form in (1,):
        value = "Q" + value  # a directory-looking value is left for PWD
        text = "set {}={} then run".format(name, value)
    add("named:" + name, value, text=text)

lookalikes = []


def like(kind, text):
    lookalikes.append({"kind": kind, "text": text})


for _ in range(10):
    like("git-sha", "commit " + rand(HEX, 40) + " merged")
    like("short-sha", "fixed in " + rand(HEX, 7) + " and " + rand(HEX, 7))
    like("uuid", "request id {}-{}-{}-{}-{}".format(rand(HEX, 8), rand(HEX, 4), rand(HEX, 4), rand(HEX, 4), rand(HEX, 12)))
    like("sha256", "sha256:" + rand(HEX, 64))
    like("md5", "md5 " + rand(HEX, 32))
    like("base64-data", "data:image/png;base64," + rand(B64, 80) + "==")
    like("docker-digest", "image@sha256:" + rand(HEX, 64))
    like("semver-at", "{}@{}.{}.{}".format(R.choice(["lodash", "react", "@types/node", "serde"]), R.randint(0, 20),
                                           R.randint(0, 30), R.randint(0, 40)))
    like("scp-remote", "git@github.com:{}/{}.git".format(rand(string.ascii_lowercase, 6), rand(string.ascii_lowercase, 5)))
    like("url-no-password", "https://{}.example.com:8443/{}?q={}".format(rand(string.ascii_lowercase, 5),
                                                                           rand(string.ascii_lowercase, 6), R.randint(1, 99)))
    like("url-user-only", "https://{}@example.com/{}".format(rand(string.ascii_lowercase, 4), rand(string.ascii_lowercase, 4)))
    like("handle", "follow @{} and @{}".format(rand(string.ascii_lowercase, 6), rand(string.ascii_lowercase, 5)))
    n = "4" + rand(string.digits, 15)
    while luhn_ok(n):
        n = "4" + rand(string.digits, 15)
    like("luhn-failing-number", "order {} shipped".format(group(n, [4, 4, 4, 4], R.choice([" ", "-"]))))
    like("timestamp-ms", "ts={}".format(R.randint(1600000000000, 1800000000000)))
    like("phone", "call +1 {} {} {}".format(rand(string.digits, 3), rand(string.digits, 3), rand(string.digits, 4)))
    like("ip-and-port", "{}.{}.{}.{}:{}".format(R.randint(1, 254), R.randint(0, 255), R.randint(0, 255),
                                               R.randint(1, 254), R.randint(1024, 65535)))
    like("arn", "arn:aws:iam::{}:role/{}".format(rand(string.digits, 12), rand(string.ascii_lowercase, 8)))
    like("short-prefix", R.choice(["ghp_short", "xoxb-1", "AKIA1234", "sk_live_123", "AIzaXYZ", "glpat-abc",
                                    "npm_install", "hf_hub", "sk-", "eyJhbGciOiJIUzI1NiJ9"]))
    like("lowercase-akia", "akia" + rand(string.ascii_lowercase + string.digits, 16))
    like("kebab-sk", "sk-" + "-".join(rand(string.ascii_lowercase, R.randint(3, 8)) for _ in range(4)))
    like("env-reference", R.choice(["token=${GITHUB_TOKEN}", "password=$DB_PASSWORD", "api_key: ${OPENAI_API_KEY}",
                                    "export GITHUB_TOKEN", "--token \"$TOKEN\""]))
    like("placeholder", R.choice(["api_key=<your-api-key>", "password: <password>", "token=<TOKEN>",
                                  "Authorization: Bearer <token>"]))
    like("public-key", "-----BEGIN PUBLIC KEY-----\n" + rand(B64, 64) + "\n" + rand(B64, 20) + "==\n-----END PUBLIC KEY-----")
    like("certificate", "-----BEGIN CERTIFICATE-----\n" + rand(B64, 64) + "\n-----END CERTIFICATE-----")
    like("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(B64, 43) + " " + rand(string.ascii_lowercase, 4) + "@laptop")
    like("isbn", "ISBN 978-{}-{}-{}-{}".format(R.randint(0, 9), rand(string.digits, 2), rand(string.digits, 6), R.randint(0, 9)))

for text in [
    "the password field is required",
    "enter your password and press return",
    "token count: 512",
    "tokens: 512 of 128000",
    "max_tokens=1024, input_tokens: 300, \"output_tokens\": 99",
    "token_count = 4096",
    "a bearer token is sent with each request",
    "Bearer authentication is the usual scheme.",
    "the secret of good code is small functions",
    "api keys are rotated every 90 days",
    "estimated_tokens=1200 budget=126500",
    "(let [token (tool/get-token)] (tool/fetch {:token token}))",
    "fn token(&self) -> &str { &self.token }",
    "pub token_count: usize,",
    "if tokens > budget { compact(&mut history) }",
    "(defn check [password] (count password))",
    "see the task-list on the desk-top; risk-free",
    "sk-learn-compatible-transformer-pipeline",
    "/home/ann/ask-me-anything/src/main.rs:42",
    "cd $HOME && PWD=/home/ann/project OLDPWD=/tmp make",
    "3.14159 2718281828 1e-9 -42",
    "session_id=abc123 user=ann",
    "\"session_id\": \"s-42\"",
    "password_length = 12",
    "\"passwordPolicy\": \"strict\"",
    "secretName: db-creds",
    "valueFrom: secretKeyRef",
    "token_type: bearer",
    "the author: Jane Doe",
    "bypass=1 compass=north",
    "use the --token flag to pass a token",
    "cookies are disabled in this browser",
    "auth is handled by the gateway",
    "credentials are stored in the vault",
    "Set the TOKEN environment variable",
    "version 4.17.21 released 2024-01-15 12:30",
    "order #4400123 for 2 items at 19.99",
    "IBAN DE89 3704 0044 0532 0130 00",
    "price 1234 5678 EUR",
    "user@localhost",
    "ann at example dot com",
    "HEAD@{1}",
    "@media screen and (max-width: 600px)",
    "node@18 and python@3.12",
]:
    like("prose-or-code", text)

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "secrets.jsonl"), "w") as f:
    for s in secrets:
        f.write(json.dumps(s, sort_keys=True) + "\n")
with open(os.path.join(here, "lookalikes.jsonl"), "w") as f:
    for s in lookalikes:
        f.write(json.dumps(s, sort_keys=True) + "\n")
print(len(secrets), "secrets,", len(lookalikes), "look-alikes")
