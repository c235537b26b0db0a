"""Write secrets.tsv: realistic secrets of many kinds, each in the sentence a user would say to an agent.

Every value is random (seeded, so the file is reproducible) in the documented
shape of its kind; none is a real credential. Run it to regenerate the file:
``python tests/reliability/data/make_secrets.py``. The file, not this script,
is what the tests read: the corpus is test data that stays fixed.
"""

from __future__ import annotations

import random
from pathlib import Path

from corpus_tsv import ALNUM, DIGITS, HEX, UPPER, URLSAFE, random_text, write_corpus

rnd = random.Random(20261201)
r = random_text(rnd)
B64 = ALNUM + "+/"


def word_password() -> str:
    words = ["velvet", "harbor", "quartz", "meadow", "falcon", "copper", "lantern", "glacier", "orchid", "thunder"]
    return "".join(rnd.choice(words) for _ in range(3))


def pem(kind: str) -> str:
    body = "\\n".join(r(B64, 64) for _ in range(4))
    return f"-----BEGIN {kind}-----\\n{body}\\n-----END {kind}-----"


KINDS = {
    "anthropic-key": (lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA",
                      ["remember that the staging Anthropic key is {s}", "export ANTHROPIC_API_KEY={s}"]),
    "openai-key": (lambda: "sk-proj-" + r(URLSAFE, 120), ["the OpenAI key for evals is {s}", "OPENAI_API_KEY={s}"]),
    "openai-legacy-key": (lambda: "sk-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20), ["old openai key {s} still works"]),
    "aws-access-key-id": (lambda: "AKIA" + r(UPPER + DIGITS, 16), ["the AWS key id is {s}", "aws_access_key_id = {s}"]),
    "aws-secret-key": (lambda: r(B64, 40), ["aws_secret_access_key = {s}",
                                            "run aws configure set aws_secret_access_key {s} first"]),
    "github-token": (lambda: "ghp_" + r(ALNUM, 36), ["the CI bot token is {s}", "git clone https://{s}@github.com/o/r"]),
    "github-fine-grained": (lambda: "github_pat_" + r(ALNUM + "_", 82), ["use {s} for the release bot"]),
    "gitlab-token": (lambda: "glpat-" + r(URLSAFE, 20), ["the GitLab deploy token is {s}"]),
    "slack-webhook": (lambda: f"https://hooks.slack.com/services/T{r(UPPER + DIGITS, 8)}/B{r(UPPER + DIGITS, 10)}/"
                      + r(ALNUM, 24), ["alerts post to {s}"]),
    "slack-bot-token": (lambda: f"xoxb-{r(DIGITS, 11)}-{r(DIGITS, 13)}-{r(ALNUM, 24)}", ["the Slack bot token is {s}"]),
    "slack-app-token": (lambda: f"xapp-1-A{r(UPPER + DIGITS, 10)}-{r(DIGITS, 13)}-{r(HEX, 64)}",
                        ["socket mode needs {s}"]),
    "stripe-secret-key": (lambda: "sk_live_" + r(ALNUM, 99), ["the stripe live key is {s}"]),
    "stripe-webhook-secret": (lambda: "whsec_" + r(ALNUM, 32), ["the webhook signing secret is {s}"]),
    "google-api-key": (lambda: "AIza" + r(URLSAFE, 35), ["the maps key is {s}"]),
    "npm-token": (lambda: "npm_" + r(ALNUM, 36),
                  ["the npm publish token is {s}", "//registry.npmjs.org/:_authToken={s}"]),
    "pypi-token": (lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 120), ["twine upload with {s}"]),
    "huggingface-token": (lambda: "hf_" + r(ALNUM, 34), ["the HF token for the gated model is {s}"]),
    "sendgrid-key": (lambda: "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43),
                     ["mail goes out through SendGrid with {s}"]),
    "mailgun-key": (lambda: "key-" + r(HEX, 32), ["the Mailgun API key is {s}"]),
    "databricks-token": (lambda: "dapi" + r(HEX, 32), ["the Databricks workspace token is {s}"]),
    "twilio-key": (lambda: "SK" + r(HEX, 32), ["the Twilio API key sid is {s}"]),
    "twilio-account": (lambda: "AC" + r(HEX, 32), ["Twilio account {s} sends the SMS"]),
    "azure-storage-key": (lambda: r(B64, 86) + "==", [
        "DefaultEndpointsProtocol=https;AccountName=ledger;AccountKey={s};EndpointSuffix=core.windows.net"]),
    "azure-sas": (lambda: r(ALNUM, 43) + "%3D", ["the backup URL is https://ledger.blob.core.windows.net/b?sv=2022"
                                                 "-11-02&ss=b&srt=o&sp=r&sig={s}"]),
    "shopify-token": (lambda: "shpat_" + r(HEX, 32), ["the Shopify admin token is {s}"]),
    "digitalocean-token": (lambda: "dop_v1_" + r(HEX, 64), ["doctl auth init with {s}"]),
    "atlassian-token": (lambda: "ATATT3xFfGF0" + r(URLSAFE, 180) + "=" + r(HEX.upper(), 8),
                        ["the Jira API token is {s}"]),
    "telegram-bot-token": (lambda: r(DIGITS, 10) + ":AA" + r(URLSAFE, 33), ["the alert bot token is {s}",
                                                                           "always pass {s} when you call the bot"]),
    "discord-bot-token": (lambda: "M" + r(URLSAFE, 25) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27),
                          ["the Discord bot logs in with {s}"]),
    "square-oauth": (lambda: "sq0csp-" + r(URLSAFE, 43), ["the Square oauth secret is {s}"]),
    "mailchimp-key": (lambda: r(HEX, 32) + "-us" + str(rnd.randint(1, 20)), ["the Mailchimp key is {s}"]),
    "jwt": (lambda: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + r(URLSAFE, 60) + "." + r(URLSAFE, 43),
            ["the admin session is {s}"]),
    "bearer-token": (lambda: r(URLSAFE, 40), ["the webhook sends Authorization: Bearer {s}",
                                              "curl -H 'Authorization: Bearer {s}' https://api.internal"]),
    "basic-auth-header": (lambda: r(B64, 32) + "==", ["the proxy wants Authorization: Basic {s}"]),
    "url-password": (lambda: r(ALNUM, 14), ["the db is postgres://payouts:{s}@db.internal:5432/payouts",
                                            "cache at redis://:{s}@cache.internal:6379/0",
                                            "mongodb+srv://app:{s}@cluster0.example.net/prod"]),
    "password-assignment": (lambda: r(ALNUM, 10) + rnd.choice("!#%&*+") + r(DIGITS, 2),
                            ["the db password is password={s}", "DB_PASSWORD={s}", '"password": "{s}"']),
    "letters-only-password": (word_password, ["the admin password=\"{s}\"", "ADMIN_PASSWORD={s}",
                                              "set SMTP_PASS={s} in the env"]),
    "secret-assignment": (lambda: r(ALNUM, 32), ["the OAuth app has client_secret={s}", "SESSION_SECRET={s}"]),
    "cli-password": (lambda: r(ALNUM, 12) + rnd.choice("!#%") + r(DIGITS, 3),
                     ["psql --password {s} -h db", "redis-cli --pass {s} ping", "vault login --token {s}"]),
    "mysql-password": (lambda: r(ALNUM, 12) + r(DIGITS, 2), ["connect with mysql -u root -p{s} ledger"]),
    "curl-user": (lambda: r(ALNUM, 14) + r(DIGITS, 2), ["fetch it with curl -u admin:{s} https://ci.internal/api"]),
    "env-export-unknown-name": (lambda: r(ALNUM, 28) + r(DIGITS, 4), ["export VENDOR_THING={s}",
                                                                       "ACME_LICENSE={s} in .env"]),
    "rsa-private-key": (lambda: pem("RSA PRIVATE KEY"), ["the deploy key is {s}"]),
    "openssh-private-key": (lambda: pem("OPENSSH PRIVATE KEY"), ["my ssh key: {s}"]),
    "pgp-private-key": (lambda: pem("PGP PRIVATE KEY BLOCK"), ["the signing key is {s}"]),
}


def main() -> None:
    write_corpus(KINDS, Path(__file__).with_name("secrets.tsv"))


if __name__ == "__main__":
    main()
