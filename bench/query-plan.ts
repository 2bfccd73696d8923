/** A node of `EXPLAIN (FORMAT JSON)`'s plan, as far as the benches read it. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The scans a plan uses, each with its index if any, in plan order without repeats. */
export function planScans(plan: PlanNode): string {
  const nodes: string[] = [];
  const walk = (node: PlanNode) => {
    if (/Scan/.test(node['Node Type']))
      nodes.push(`${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return [...new Set(nodes)].join(', ');
}
