package docker

import (
	"context"
	"sort"
	"strings"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"
)

// keepBuilds is how many builds' images of each kind stay: the current
// one and the one before (another checkout, or a binary just replaced).
const keepBuilds = 2

// prunedRepos are the images tagged per build: each build of kubelab made
// a new ~170 MB control-plane image and ~500 MB node image, which stayed
// for ever. The base image (debootstrap, minutes to make) and the
// workload images (fixed tags) are not pruned.
var prunedRepos = []string{"kubelab/kubelab", "kubelab/node", "kubelab/grader"}

// pruneImages removes the per-build images of earlier builds but the
// newest keepBuilds of each repository, never one of current and never
// one a container uses (the engine refuses that removal). It returns how
// many it removed.
func pruneImages(ctx context.Context, cli *client.Client, current ...string) int {
	res, err := cli.ImageList(ctx, client.ImageListOptions{Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return 0
	}
	byRepo := map[string][]image.Summary{}
	for _, im := range res.Items {
		for _, t := range im.RepoTags {
			repo, _, _ := strings.Cut(t, ":")
			byRepo[repo] = append(byRepo[repo], im)
		}
	}
	removed := 0
	for _, repo := range prunedRepos {
		ims := byRepo[repo]
		sort.Slice(ims, func(i, j int) bool { return ims[i].Created > ims[j].Created })
		for i, im := range ims {
			if i < keepBuilds || tagged(im, current) {
				continue
			}
			if _, err := cli.ImageRemove(ctx, im.ID, client.ImageRemoveOptions{PruneChildren: true}); err == nil {
				removed++
			}
		}
	}
	return removed
}

func tagged(im image.Summary, refs []string) bool {
	for _, t := range im.RepoTags {
		for _, r := range refs {
			if t == r {
				return true
			}
		}
	}
	return false
}
