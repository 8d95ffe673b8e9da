"use client";

import { commonIdFields, type DeclaredField, detectIdFields, type FieldSpec, fieldRoles, fieldRoleWords, fieldTypes, fieldTypeWords, } from "@holdfast/core/kinds";
import { emptyToUndefined, type WidgetProps } from "./widgets";

/**
 * The widgets that read the trigger's payload: a time zone, a path into the payload, the field that tells submissions
 * apart, and the fields the form sends. Each suggests from what is known (the zones, the sample, the declared fields).
 */
let zoneList: string[] | null = null;
function zones(): string[] {
  if (!zoneList) {
    const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
    zoneList = [...(intl.supportedValuesOf?.("timeZone") ?? []), "UTC"];
  }
  return zoneList;
}

/** Text typed or picked from a list of suggestions (the browser's own searchable datalist). */
function SuggestInput({
  field,
  id,
  value,
  onChange,
  onBlur,
  ctx,
  invalid,
  placeholder,
  options,
}: WidgetProps<string | undefined> & { placeholder: string; options: { value: string; hint?: string }[] }) {
  const listId = `${id}-list`;
  return (
    <>
      <input
        id={id}
        name={field.name}
        list={listId}
        placeholder={placeholder}
        value={value ?? ""}
        aria-invalid={invalid}
        disabled={!ctx.canEdit}
        onChange={(e) => onChange(emptyToUndefined(e.target.value))}
        onBlur={onBlur}
        autoComplete="off"
      />
      <datalist id={listId}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.hint}
          </option>
        ))}
      </datalist>
    </>
  );
}

/** A searchable IANA zone: type a city or region and pick from the list. */
export function ZoneWidget(props: WidgetProps<string | undefined>) {
  return <SuggestInput {...props} placeholder="Type a city, e.g. Berlin" options={zones().map((z) => ({ value: z }))} />;
}

/** A path into the payload, picked from the declared fields and the sample's (or typed). */
export function PayloadPathWidget(props: WidgetProps<string | undefined>) {
  const w = props.field.widget as Extract<FieldSpec["widget"], { type: "payload-path" }>;
  const paths = props.ctx.variables
    .filter((v) => v.group === "Payload")
    .map((p) => ({ value: w.prefix === "input." ? p.path : p.path.slice("input.".length), ...(p.example ? { hint: p.example } : {}) }));
  const placeholder = w.placeholder ?? (paths.length ? "Pick a field of the payload" : w.prefix === "input." ? "input.timezone" : "email");
  return <SuggestInput {...props} placeholder={placeholder} options={paths} />;
}

/**
 * The payload's field that tells submissions apart: the common id fields the sample has come first (with their
 * value), then the other common names; any path can be typed. Below, in words, what the sample says.
 */
export function IdFieldWidget(props: WidgetProps<string | undefined>) {
  const detected = detectIdFields(props.ctx.sample);
  const options = [
    ...detected.map((d) => ({ value: d.path, hint: `in your sample: ${d.example}` })),
    ...commonIdFields.filter((f) => !detected.some((d) => d.path === f)).map((f) => ({ value: f })),
  ];
  const words =
    props.ctx.sample === null || props.ctx.sample === undefined
      ? "No sample yet: once a submission arrives, the id fields it has are listed first."
      : detected.length > 0
        ? `Your sample has ${detected.map((d) => d.path).join(", ")}: choose the one your form tool sets anew for each submission.`
        : "Your sample has none of the usual id fields: identical submissions are compared instead (below).";
  return (
    <>
      <SuggestInput {...props} placeholder="id, submission_id, response_id…" options={options} />
      <span className="small muted" data-id-fields={detected.map((d) => d.path).join(",")}>
        {words}
      </span>
    </>
  );
}

const roleType: Partial<Record<DeclaredField["role"], DeclaredField["type"]>> = { email: "email", time_zone: "time_zone" };
const examplePlaceholder: Record<DeclaredField["type"], string> = {
  text: "Lumen Ltd",
  email: "maya@example.com",
  number: "42",
  time_zone: "Europe/Berlin",
  phone: "+49 30 1234567",
  url: "https://example.com",
  date: "2026-12-24",
};

/**
 * The fields a trigger's form sends, as a small table: the name the form tool sends, its type, an example, and what
 * it is to the contact. Steps can use them at once; the examples make a sample before any delivery.
 */
export function DeclaredFieldsWidget({ field, id, value, onChange, ctx, invalid }: WidgetProps<DeclaredField[] | undefined>) {
  const rows = value ?? [];
  const set = (next: DeclaredField[]) => onChange(next.length ? next : undefined);
  const hasEmail = rows.some((r) => r.role === "email");
  return (
    <div id={id} className="declared-fields" aria-invalid={invalid}>
      {rows.map((r, i) => (
        <DeclaredFieldRow
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
          key={i}
          r={r}
          i={i}
          prefix={`${field.name}.${i}`}
          canEdit={ctx.canEdit}
          replace={(next) => set(rows.map((x, j) => (j === i ? next : x)))}
          remove={() => set(rows.filter((_, j) => j !== i))}
        />
      ))}
      {rows.length > 0 && !hasEmail && <p className="small muted">No field is the contact's email: runs have no contact unless the payload has "email".</p>}
      {ctx.canEdit && (
        <button
          type="button"
          className="small"
          onClick={() =>
            set([...rows, hasEmail ? { name: "", type: "text", role: "other" } : { name: "email", type: "email", example: "maya@example.com", role: "email" }])
          }
        >
          + Add field
        </button>
      )}
    </div>
  );
}

interface RowProps {
  r: DeclaredField;
  i: number;
  /** The inputs' name prefix: `<field>.<row>`. */
  prefix: string;
  canEdit: boolean;
  replace: (next: DeclaredField) => void;
  remove: () => void;
}

/** One declared field: its name, what it is to the contact, its type and example, and whether it is kept. */
function DeclaredFieldRow({ r, i, prefix, canEdit, replace, remove }: RowProps) {
  return (
    <fieldset className="declared-field" data-declared-field={r.name}>
      <legend className="sr-only">Field {i + 1}</legend>
      <label className="declared-field-cell">
        <span className="small">Field name</span>
        <input
          className="declared-field-input"
          name={`${prefix}.name`}
          placeholder="company"
          value={r.name ?? ""}
          disabled={!canEdit}
          onChange={(e) => replace({ ...r, name: e.target.value })}
        />
      </label>
      <label className="declared-field-cell">
        <span className="small">It is</span>
        <select
          className="declared-field-input"
          name={`${prefix}.role`}
          value={r.role ?? "other"}
          disabled={!canEdit}
          onChange={(e) => {
            const role = e.target.value as DeclaredField["role"];
            const { keep: _keep, ...rest } = r;
            replace({ ...rest, role, ...(roleType[role] ? { type: roleType[role] } : {}) });
          }}
        >
          {fieldRoles.map((role) => (
            <option key={role} value={role}>
              {fieldRoleWords[role]}
            </option>
          ))}
        </select>
      </label>
      <TypeAndExample r={r} prefix={prefix} canEdit={canEdit} replace={replace} />
      <div className="row-inline declared-field-foot">
        <KeptOnContact r={r} prefix={prefix} canEdit={canEdit} replace={replace} />
        {canEdit && (
          <button type="button" className="small" aria-label={`Remove field ${r.name || i + 1}`} onClick={remove}>
            Remove
          </button>
        )}
      </div>
    </fieldset>
  );
}

function TypeAndExample({ r, prefix, canEdit, replace }: Omit<RowProps, "i" | "remove">) {
  return (
    <>
      <label className="declared-field-cell">
        <span className="small">Type</span>
        <select
          className="declared-field-input"
          name={`${prefix}.type`}
          value={r.type ?? "text"}
          disabled={!canEdit}
          onChange={(e) => replace({ ...r, type: e.target.value as DeclaredField["type"] })}
        >
          {fieldTypes.map((t) => (
            <option key={t} value={t}>
              {fieldTypeWords[t]}
            </option>
          ))}
        </select>
      </label>
      <label className="declared-field-cell">
        <span className="small">Example</span>
        <input
          className="declared-field-input"
          name={`${prefix}.example`}
          placeholder={examplePlaceholder[r.type ?? "text"]}
          value={r.example ?? ""}
          disabled={!canEdit}
          onChange={(e) => {
            const { example: _old, ...rest } = r;
            replace(e.target.value === "" ? rest : { ...rest, example: e.target.value });
          }}
        />
      </label>
    </>
  );
}

/** "Keep on the contact" for other fields; name and company are always kept. */
function KeptOnContact({ r, prefix, canEdit, replace }: Omit<RowProps, "i" | "remove">) {
  if (r.role !== "other") {
    return <span className="small muted">{r.role === "name" || r.role === "company" ? `Kept on the contact as contact.${r.role}` : ""}</span>;
  }
  return (
    <label className="check small">
      <input
        type="checkbox"
        name={`${prefix}.keep`}
        checked={r.keep === true}
        disabled={!canEdit}
        onChange={(e) => {
          const { keep: _keep, ...rest } = r;
          replace(e.target.checked ? { ...rest, keep: true } : rest);
        }}
      />
      Keep on the contact
    </label>
  );
}
