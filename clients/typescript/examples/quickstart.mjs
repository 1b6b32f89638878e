// Remember, recall and forget through a hindsight server:
//   hindsight serve &            # or point HINDSIGHT_URL / HINDSIGHT_API_KEY at yours
//   node quickstart.mjs
import { Client, NotFoundError } from "@agent-hindsight/client";

const memory = new Client(process.env.HINDSIGHT_URL ?? "http://127.0.0.1:8765", {
  apiKey: process.env.HINDSIGHT_API_KEY || undefined,
});
const owner = "user:alice";

await memory.retain(owner, "I live in Paris and I love jazz.", { session_id: "s1" });
for (const { memory: found, score } of await memory.recall(owner, "where does she live?", { k: 3 })) {
  console.log(score.toFixed(3), found.kind, found.content);
}
await memory.observe(owner, "chat-1", "I moved to Berlin last month.");
console.log(await memory.sessions(owner));
await memory.closeSession(owner, "chat-1");

const receipt = await memory.forget({ owner });
console.log(`forgot ${receipt.count} memories`);
try {
  await memory.get(receipt.deleted_ids[0]);
} catch (error) {
  if (!(error instanceof NotFoundError)) throw error;
  console.log("gone:", error.message);
}
