"""Names that are private by convention: hidden (dot) files and folders, and credential files.

Hidden: on Unix a name starting with "." is hidden, and that is where programs keep their state,
caches and credentials (~/.aws, ~/.ssh, ~/.gnupg, ~/.docker, ~/.kube, ~/.config). Like ripgrep and
fd, a walk leaves hidden files and folders out unless asked ([ingest] include_hidden).

Credentials: files whose name, fixed by the tool that writes them, says they hold a private key,
password or token. They are left out of every walk, hidden or not, whatever the settings; a file
named directly as a PATH is still read, because then the user asked for it. The list:
- private keys: OpenSSH's id_rsa, id_dsa, id_ecdsa, id_ed25519 (and the -sk variants; not the
  .pub halves), and key containers by extension: PEM (.pem, .key), PKCS#12 (.p12, .pfx), Java
  key stores (.jks, .keystore), PuTTY (.ppk), GnuPG secret rings (secring.gpg);
- login files: .netrc/_netrc, .npmrc, .pypirc, .pgpass, .git-credentials, .htpasswd, .dockercfg,
  .my.cnf, and dotenv files (.env, .env.*);
- cloud and deployment credentials: credentials (AWS CLI, and others), credentials.json and
  client_secret*.json (Google OAuth), application_default_credentials.json (gcloud),
  kubeconfig, Terraform state and variables (.tfstate, .tfvars), Rails master.key and
  credentials.yml.enc, and secrets.{json,yaml,yml,toml} (Kubernetes, Streamlit, SOPS).
"""

from __future__ import annotations

import re

_CREDENTIAL_NAMES = frozenset(
    {
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "secring.gpg",
        ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", ".htpasswd",
        ".dockercfg", ".my.cnf", ".env", "credentials", "credentials.json",
        "application_default_credentials.json", "kubeconfig", "master.key", "credentials.yml.enc",
        "secrets.json", "secrets.yaml", "secrets.yml", "secrets.toml",
    }
)  # fmt: skip
_CREDENTIAL_SUFFIXES = (
    ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".tfstate", ".tfvars",
)  # fmt: skip
_CREDENTIAL_PATTERN = re.compile(r"\.env\..*|client_secret.*\.json")

HIDDEN = "hidden (set [ingest] include_hidden = true to index hidden files and folders)"
CREDENTIALS = "may hold keys or passwords (name the file as a PATH to index it anyway)"


def is_hidden(name: str) -> bool:
    return name.startswith(".")


def may_hold_credentials(name: str) -> bool:
    """Whether a file called `name` is, by its well-known name, a key, password or token file."""
    lowered = name.lower()
    return (
        lowered in _CREDENTIAL_NAMES
        or lowered.endswith(_CREDENTIAL_SUFFIXES)
        or _CREDENTIAL_PATTERN.fullmatch(lowered) is not None
    )
