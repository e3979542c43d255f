"use client";
import { SendIcon } from "lucide-react";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { SubmitButton } from "@/components/ui/submit-button";
import { Field, JsonEditor, type useAct } from "./edit-kit";
import { parseJson } from "./json-text";

const WHOLE = /^\d{1,10}$/;
const SIGNED = /^-?\d{1,4}$/;

/**
 * Send a job (queue.send): the queue (an existing one or a new name), a JSON body, and the
 * operation's options — delay in seconds, priority (-1000..1000, higher first), attempts before
 * it is dead, a dedupe key.
 */
export function SendJobDialog(props: {
  act: ReturnType<typeof useAct>;
  queue: string;
  onSent: (queue: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [queue, setQueue] = useState(props.queue);
  const [body, setBody] = useState("{\n  \n}");
  const [delay, setDelay] = useState("");
  const [priority, setPriority] = useState("");
  const [attempts, setAttempts] = useState("");
  const [dedupe, setDedupe] = useState("");
  const parsed = parseJson(body);
  const numbersOk =
    (delay === "" || WHOLE.test(delay)) &&
    (priority === "" || SIGNED.test(priority)) &&
    (attempts === "" || (WHOLE.test(attempts) && Number(attempts) >= 1));
  const ready = parsed.ok && /^\S+$/.test(queue) && numbersOk && !props.act.pending;
  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!ready || !parsed.ok) return;
    const args = {
      queue,
      body: parsed.value,
      ...(delay === "" ? {} : { delay: `${delay}s` }),
      ...(priority === "" ? {} : { priority: Number(priority) }),
      ...(attempts === "" ? {} : { max_attempts: Number(attempts) }),
      ...(dedupe === "" ? {} : { dedupe_key: dedupe }),
    };
    try {
      const job = await props.act.run<{ id: string; deduplicated: boolean }>("queue.send", args);
      props.onSent(queue);
      setOpen(false);
      // The answer says whether a pending job with the dedupe key was found instead.
      toast.success(job.deduplicated ? `Deduplicated: job ${job.id} was already pending` : `Sent job ${job.id}`);
    } catch {
      // toasted; the form stays as typed
    }
  }
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (props.act.pending) return;
        if (next) setQueue(props.queue);
        setOpen(next);
      }}
    >
      <DialogTrigger asChild>
        <Button>
          <SendIcon aria-hidden /> Send a job
        </Button>
      </DialogTrigger>
      <DialogContent className="sm:max-w-2xl">
        <form onSubmit={send} className="grid gap-4">
          <DialogHeader>
            <DialogTitle>Send a job</DialogTitle>
            <DialogDescription>A new queue name makes the queue.</DialogDescription>
          </DialogHeader>
          <Field label="Queue">
            {(id) => (
              <Input
                id={id}
                value={queue}
                onChange={(e) => setQueue(e.target.value)}
                autoComplete="off"
                spellCheck={false}
                className="font-mono"
              />
            )}
          </Field>
          <JsonEditor label="Body (JSON)" value={body} onChange={setBody} rows={8} autoFocus />
          <div className="grid gap-4 sm:grid-cols-2">
            <Field label="Delay (seconds)" hint="Empty: ready at once.">
              {(id) => (
                <Input
                  id={id}
                  value={delay}
                  onChange={(e) => setDelay(e.target.value)}
                  inputMode="numeric"
                  placeholder="0"
                  aria-invalid={delay !== "" && !WHOLE.test(delay)}
                />
              )}
            </Field>
            <Field label="Priority" hint="-1000 to 1000; higher goes first.">
              {(id) => (
                <Input
                  id={id}
                  value={priority}
                  onChange={(e) => setPriority(e.target.value)}
                  inputMode="numeric"
                  placeholder="0"
                  aria-invalid={priority !== "" && !SIGNED.test(priority)}
                />
              )}
            </Field>
            <Field label="Max attempts" hint="Then the job is dead. Default 5.">
              {(id) => (
                <Input
                  id={id}
                  value={attempts}
                  onChange={(e) => setAttempts(e.target.value)}
                  inputMode="numeric"
                  placeholder="5"
                  aria-invalid={attempts !== "" && !WHOLE.test(attempts)}
                />
              )}
            </Field>
            <Field label="Dedupe key" hint="A pending job with this key is not sent twice.">
              {(id) => (
                <Input
                  id={id}
                  value={dedupe}
                  onChange={(e) => setDedupe(e.target.value)}
                  autoComplete="off"
                  className="font-mono"
                />
              )}
            </Field>
          </div>
          {!numbersOk && (
            <p role="alert" className="text-xs text-destructive">
              Delay and max attempts are whole numbers; priority a whole number from -1000 to 1000.
            </p>
          )}
          <DialogFooter>
            <Button variant="outline" onClick={() => setOpen(false)} disabled={props.act.pending}>
              Cancel
            </Button>
            <SubmitButton disabled={!ready} aria-busy={props.act.pending}>
              {props.act.pending ? "Sending…" : "Send"}
            </SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
