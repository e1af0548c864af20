-- The capability carried by sessionUrl itself (docs/respondent-page.md): a random token in the URL's
-- fragment lets the page connect without a publishable key (an email link, a plain iframe). Only its
-- SHA-256 is kept here; older sessions have none and connect with the publishable key only.
ALTER TABLE sessions ADD COLUMN link_token_sha256 TEXT;
