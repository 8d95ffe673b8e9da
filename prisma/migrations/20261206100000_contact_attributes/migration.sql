-- contact attributes (issue 41): a contact keeps its name, company and the fields its automations' triggers declare
-- as kept (kinds/declared-fields.ts), as one JSON object on its row: scoped by organisation and row-level security
-- with the row, erased with it (sql/contacts.ts contactsEraseData), bounded in size. A delivery that names the contact
-- writes the attributes it has in the transaction that resolves the contact (the latest delivery's values win).
--   holdfast_contact_resolve takes the attributes (live body in packages/core/src/sql/functions/contact_resolve.sql):
--   the three-argument version is dropped here, the file creates the four-argument one.
ALTER TABLE "contacts" ADD COLUMN "attributes" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_attributes_check"
  CHECK (jsonb_typeof("attributes") = 'object' AND octet_length("attributes"::text) <= 65536);

DROP FUNCTION holdfast_contact_resolve(text, text, text);
