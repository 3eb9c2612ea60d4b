"""Placeholders and documentation values that real files are full of, written here
from the vendors' documented formats and common template conventions (not copied
from any scanner's rule or test files): the union of the catalogue's oracle patterns
must remove nothing from any of them (tests/unit/test_record_formats.py,
benchmarks/bench_records.py)."""

from __future__ import annotations

X36, Z36 = "x" * 36, "0" * 36

FALSE_POSITIVES: tuple[str, ...] = (
    # format-valid placeholders: a vendor's prefix and length, a placeholder body
    f"GITHUB_TOKEN=ghp_{X36}", f"github_token: ghp_{'X' * 36}", f'"token": "gho_{Z36}"',
    "GITHUB_TOKEN=ghp_1234567890abcdefghijklmnopqrstuvwxyz", "GH_TOKEN=ghp_" + "*" * 36,
    "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX", "aws_access_key_id = AKIA0000000000000000",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws_secret_access_key=" + "x" * 40, "AWS_SECRET_ACCESS_KEY=" + "0" * 40,
    "GOOGLE_API_KEY=AIzaSy" + "x" * 33, "maps_api_key: AIza" + "a" * 35, "FIREBASE_API_KEY=AIzaSy" + "X" * 33,
    "STRIPE_SECRET_KEY=sk_live_" + "0" * 24, "stripe_secret_key: sk_test_" + "x" * 24,
    "STRIPE_SECRET_KEY=sk_live_1234567890abcdefghijklmn", "STRIPE_SECRET_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "SLACK_BOT_TOKEN=xoxb-000000000000-0000000000000-" + "x" * 24, "slack_bot_token: xoxb-not-a-real-token-this-will-not-work",
    "GITLAB_TOKEN=glpat-" + "x" * 20, "gitlab_token: glpat-" + "X" * 20, "CI_JOB_TOKEN=glpat-" + "0" * 20,
    f"NPM_TOKEN=npm_{X36}", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}", f"//registry.npmjs.org/:_authToken=npm_{Z36}",
    "password = pypi-AgEIcHlwaS5vcmc" + "x" * 60, "password = <your-pypi-token>", "password = ${PYPI_TOKEN}",
    "HF_TOKEN=hf_" + "x" * 34, "hf_token: hf_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh",
    "DIGITALOCEAN_TOKEN=dop_v1_" + "0" * 64, "do_token: dop_v1_" + "x" * 64,
    "HEROKU_API_KEY=HRKU-AA" + "x" * 58, "DATABRICKS_TOKEN=dapi" + "0" * 32,
    "SENDGRID_API_KEY=SG." + "x" * 22 + "." + "x" * 43, "TWILIO_API_KEY=SK" + "0" * 32,
    "MAILGUN_API_KEY=key-" + "x" * 32, "mailchimp_api_key: " + "0" * 32 + "-us6",
    "GROQ_API_KEY=gsk_" + "x" * 52, "REPLICATE_API_TOKEN=r8_" + "x" * 37, "DOCKER_HUB_TOKEN=dckr_pat_" + "x" * 27,
    "SENTRY_AUTH_TOKEN=sntryu_" + "0" * 64, "VAULT_TOKEN=hvs." + "x" * 90, "RUBYGEMS_API_KEY=rubygems_" + "0" * 48,
    "SHOPIFY_ACCESS_TOKEN=shpat_" + "0" * 32, "SQUARE_ACCESS_TOKEN=EAAA" + "x" * 60,
    "ANTHROPIC_API_KEY=sk-ant-api03-" + "x" * 93 + "AA", "OPENAI_API_KEY=sk-proj-" + "x" * 48,
    "SOPS_AGE_KEY=AGE-SECRET-KEY-1" + "X" * 58, "TELEGRAM_BOT_TOKEN=0000000000:AA" + "x" * 33,
    "DD_API_KEY=" + "0" * 32, "datadog_api_key: " + "x" * 32, "DD_APP_KEY=" + "0" * 40,
    "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/" + "X" * 24,
    "DISCORD_WEBHOOK_URL=https://discord.com/api/webhooks/" + "0" * 19 + "/" + "x" * 68,
    "AZURE_CLIENT_SECRET=xxx8Q~" + "x" * 34,
    # templates and variables in a secret's place
    "GITHUB_TOKEN=${GITHUB_TOKEN}", "token: ${{ secrets.GITHUB_TOKEN }}", 'api_key: "{{ .Values.apiKey }}"',
    "api_key: <YOUR_API_KEY>", "client_secret = <client-secret>", "password: ${DB_PASSWORD}", "password=%(DB_PASSWORD)s",
    "secret_key = REPLACE_ME", "api_key = your_api_key_here", "token = REPLACE_WITH_YOUR_TOKEN", "password = changeme",
    'password: "********"', "token: [REDACTED]", "api_token = insert-your-token-here",
    # low-entropy and sequential values under secret-named keys
    'token = "' + "x" * 32 + '"', "secret_key = 0123456789abcdef0123456789abcdef", 'password: "' + "a" * 20 + '"',
    "api_key=1234567890abcdefghij1234567890",
    # URLs and headers with a placeholder in the secret's place
    "DATABASE_URL=postgresql://user:password@localhost:5432/app", "database_url: mysql://root:changeme@db:3306/app",
    "REDIS_URL=redis://:${REDIS_PASSWORD}@cache:6379/0", "git remote add origin https://user:${TOKEN}@github.com/o/r.git",
    "upload_url: https://deploy:<password>@registry.example.com/simple/",
    "Authorization: Bearer ${TOKEN}", "Authorization: Bearer YOUR_ACCESS_TOKEN_GOES_HERE", "Authorization: Bearer <token>",
    'WWW-Authenticate: Basic realm="api"',
    # command lines that take the password from elsewhere, or show a placeholder word
    "curl -u user:password https://api.example.com/v1/health", "curl -sS -u admin:changeme https://registry.example.com/v2/",
    'mysql -h db -u root -p"$MYSQL_PWD" -e "SELECT 1"', "mysqldump -u app -p$DB_PASSWORD app > app.sql",
    'echo "$TOKEN" | docker login -u deploy --password-stdin ghcr.io', 'docker login -u deploy -p "$DOCKER_PASSWORD" ghcr.io',
    "SSHPASS=$DEPLOY_PASS sshpass -e ssh deploy@host",
)
