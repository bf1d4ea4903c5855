package serve

import (
	"path/filepath"
	"sync"

	"sweepbench/sessions"
)

// stores are the users' sessions databases, one per user under the data
// dir (users/NAME/sessions.db), each opened once however many connections
// and kept studies use it, and closed when the last lets it go.
type stores struct {
	dir string

	mu   sync.Mutex
	open map[string]*userStore
}

type userStore struct {
	st   *sessions.Store
	refs int
}

func newStores(dataDir string) *stores {
	return &stores{dir: dataDir, open: map[string]*userStore{}}
}

// path is user's database file. user is a checked name (AuthorizedKeys):
// one path element, never "..".
func (s *stores) path(user string) string {
	return filepath.Join(s.dir, "users", user, "sessions.db")
}

// acquire opens user's store (or shares the open one); release lets it go.
func (s *stores) acquire(user string) (st *sessions.Store, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.open[user]
	if u == nil {
		st, err := sessions.Open(s.path(user))
		if err != nil {
			return nil, nil, err
		}
		u = &userStore{st: st}
		s.open[user] = u
	}
	u.refs++
	var once sync.Once
	return u.st, func() { once.Do(func() { s.release(user, u) }) }, nil
}

func (s *stores) release(user string, u *userStore) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.refs--; u.refs == 0 {
		delete(s.open, user)
		_ = u.st.Close()
	}
}

// readOnly opens user's store to read only (the team view); the caller
// closes it.
func (s *stores) readOnly(user string) (*sessions.Store, error) {
	return sessions.OpenReadOnly(s.path(user))
}
