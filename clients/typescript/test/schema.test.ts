// src/schema.ts is what scripts/generate.mjs makes of the committed OpenAPI snapshot.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without declarations
import { OUTPUT, SNAPSHOT, render } from "../scripts/generate.mjs";

describe("the generated types", () => {
  it("are up to date with openapi.json (else: npm run generate)", () => {
    const openapi = JSON.parse(readFileSync(SNAPSHOT as string, "utf8"));
    expect(readFileSync(OUTPUT as string, "utf8")).toBe((render as (o: unknown) => string)(openapi));
  });
});
