"use client";
import { useEffect, useState } from "react";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";

interface Props {
  workspaces: { id: string; name: string; role: string; groups: string[] }[];
}

/**
 * The workspace and group selects. Without JavaScript the group select lists every
 * workspace's groups under its name; with it, only the chosen workspace's.
 */
export function WorkspaceGroup({ workspaces }: Props) {
  const [workspace, setWorkspace] = useState(workspaces[0]?.id ?? "");
  const [scripted, setScripted] = useState(false);
  useEffect(() => setScripted(true), []);
  const shown = scripted ? workspaces.filter((w) => w.id === workspace) : workspaces;
  const empty = scripted && (shown[0]?.groups.length ?? 0) === 0;
  return (
    <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
      <div className="space-y-1.5">
        <Label htmlFor="workspace">Workspace</Label>
        <NativeSelect
          id="workspace"
          name="workspace"
          required
          value={workspace}
          onChange={(e) => setWorkspace(e.target.value)}
        >
          {workspaces.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name} ({w.role})
            </option>
          ))}
        </NativeSelect>
      </div>
      <div className="space-y-1.5">
        <Label htmlFor="group">Group</Label>
        <NativeSelect id="group" name="group" required key={scripted ? workspace : "all"}>
          {shown.map((w) =>
            scripted ? (
              w.groups.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))
            ) : (
              <optgroup key={w.id} label={w.name}>
                {w.groups.map((g) => (
                  <option key={`${w.id}/${g}`} value={g}>
                    {g}
                  </option>
                ))}
              </optgroup>
            ),
          )}
        </NativeSelect>
        {empty ? (
          <p className="text-xs text-muted-foreground">This workspace has no groups yet: create one first.</p>
        ) : null}
      </div>
    </div>
  );
}
