-- The organisation of the invitation whose link token hashes to p_token_hash (none: no such invitation). The person
-- opening the link is not yet a member, so the web's session scope cannot see the row; holding the link is the
-- proof, and this is the one thing it reveals before the web scopes itself to that organisation
-- (people/auth/invitations.ts). SECURITY DEFINER: it reads invitations whatever the caller may see.
-- History (prisma/migrations, never edited): new in 20261204120000_invitations.
CREATE OR REPLACE FUNCTION holdfast_invitation_org(p_token_hash text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT org_id FROM invitations WHERE token_hash = p_token_hash
$$;
