package charts

// AgentChart is the directory of flotilla-agent's chart, installed into a
// Pull-mode member (flotillactl register applies its Deployment).
const AgentChart = "flotilla-agent"
