package member

import "k8s.io/client-go/rest"

// NewClient builds the clients of a member from a REST configuration (the
// agent's own member, reached with its local credentials).
func NewClient(cfg *rest.Config) (*Client, error) {
	cl, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	cl.key = cfg.Host
	return cl, nil
}

// Pin makes Get return cl for the cluster called name, whatever its
// Cluster object says: flotilla-agent reaches its member with its own
// credentials, not through a Secret of the control plane.
func (c *Cache) Pin(name string, cl *Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinned == nil {
		c.pinned = map[string]*Client{}
	}
	c.pinned[name] = cl
}
